// Tests of loading bad checkpoint files: truncated at every length, every byte flipped, wrong
// magic, absurd sizes, negative dims, non-UTF-8 names, empty files, directories, missing
// files, and the corpus of inputs found by fuzzing. Every one must give a clear FormatError
// (or IoError for the file system) and never a crash, a hang or a huge allocation.
#include <sys/stat.h>

#include <filesystem>

#include "io_helpers.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;
using testing::ByteWriter;
using testing::wrap_payload;

namespace {

io::Checkpoint small_checkpoint() {
  io::Checkpoint c;
  c.set("step", std::int64_t{3});
  c.set("name", std::string("demo"));
  c.section("model") = io::state_dict(*testing::small_model());
  return c;
}

// The start of a payload up to the first tensor of section "model" (the tensor name excluded).
ByteWriter payload_start(std::uint32_t n_tensors = 1) {
  ByteWriter w;
  w.u8(1).str("state_dict").u32(0).u32(1).str("model").u32(n_tensors);
  return w;
}

// A payload with one tensor "w" whose header fields are given.
std::string one_tensor(std::uint8_t dtype, const std::vector<std::int64_t>& dims, std::uint64_t nbytes,
                       const std::string& data) {
  ByteWriter w = payload_start();
  w.str("w").u8(dtype).u8(static_cast<std::uint8_t>(dims.size()));
  for (auto d : dims) w.i64(d);
  w.u64(nbytes).raw(data);
  return wrap_payload(w.bytes);
}

std::string corpus_dir() { return std::string(TAPEGRAD_REFERENCE_DIR) + "/../io/corpus"; }

}  // namespace

TEST_CASE("bad files: the crafted-file helper makes files the loader accepts", "[io][bad_files]") {
  // Guards the tests below: their files differ from a valid one only where they say.
  const io::Checkpoint c = io::decode(one_tensor(0, {2}, 8, std::string(8, '\0')));
  CHECK(c.find_section("model")->at("w").to_vector() == std::vector<double>{0, 0});
}

TEST_CASE("bad files: binary truncated at every length", "[io][bad_files]") {
  const std::string bytes = io::encode(small_checkpoint());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("truncated to " << n << " of " << bytes.size() << " bytes");
    REQUIRE_THROWS_AS(io::decode(bytes.substr(0, n)), io::FormatError);
  }
  REQUIRE_THROWS_WITH(io::decode(bytes.substr(0, 12), "m.tgc"), Contains("m.tgc: truncated: 12 bytes"));
  REQUIRE_THROWS_WITH(io::decode(bytes.substr(0, bytes.size() - 1)),
                      Contains("truncated: the header promises"));
  REQUIRE_THROWS_WITH(io::decode(bytes + "x"), Contains("1 unexpected bytes after the payload"));
}

TEST_CASE("bad files: binary with any byte flipped is refused", "[io][bad_files]") {
  const std::string bytes = io::encode(small_checkpoint());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xFF}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      INFO("byte " << i << " xor " << int(mask));
      REQUIRE_THROWS_AS(io::decode(bad), io::FormatError);
    }
  }
  std::string bad = bytes;
  bad[bytes.size() - 3] ^= 0x10;  // in the last tensor's data
  REQUIRE_THROWS_WITH(io::decode(bad), Contains("corrupted: checksum mismatch"));
}

TEST_CASE("bad files: JSON truncated or flipped never loads wrong values", "[io][bad_files]") {
  const io::Checkpoint c = small_checkpoint();
  const std::string text = io::encode(c, io::Format::json);
  // Only the final newline may go: everything shorter is incomplete JSON.
  for (std::size_t n = 0; n + 1 < text.size(); ++n) {
    INFO("truncated to " << n << " of " << text.size() << " bytes");
    REQUIRE_THROWS_AS(io::decode(text.substr(0, n)), io::FormatError);
  }
  // A flipped byte is refused, or loads the same tensor values: the CRC-32 of each tensor
  // catches changed digits. (Names and metadata are plain text in JSON, not checksummed: a
  // flip there can load, e.g. "step": 2 instead of 3. The binary format covers everything.)
  int refused = 0, loaded = 0;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    std::string bad = text;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    try {
      const io::Checkpoint back = io::decode(bad);
      ++loaded;
      INFO("byte " << i << " flipped still loads; it must load the same tensor values");
      REQUIRE(back.sections.size() == 1);
      const io::StateDict& got = back.sections[0].second;  // by position: a name may have changed
      const io::StateDict& want = c.sections[0].second;
      REQUIRE(got.size() == want.size());
      for (std::size_t k = 0; k < got.size(); ++k) CHECK(testing::same_bits(got.items()[k].second, want.items()[k].second));
    } catch (const io::FormatError&) {
      ++refused;
    }
  }
  CHECK(refused > 10 * loaded);
}

TEST_CASE("bad files: wrong magic", "[io][bad_files]") {
  std::string bytes = io::encode(small_checkpoint());
  bytes[3] = 'X';
  REQUIRE_THROWS_WITH(io::decode(bytes), Contains("not a tapegrad checkpoint: it starts with bytes 54 41 50 58"));
  REQUIRE_THROWS_WITH(io::decode("\x7f" "ELF\x02\x01\x01\x00rest"), Contains("7f 45 4c 46"));
  const std::string safetensors = io::encode_safetensors(io::state_dict(*testing::small_model()));
  REQUIRE_THROWS_WITH(io::decode(safetensors), Contains("looks like a safetensors file"));
  std::string text = io::encode(small_checkpoint(), io::Format::json);
  text.replace(text.find("tapegrad-checkpoint"), 8, "tapegrax");
  REQUIRE_THROWS_WITH(io::decode(text), Contains("wrong magic \"tapegrax-checkpoint\""));
}

TEST_CASE("bad files: version 0", "[io][bad_files]") {
  ByteWriter w;
  w.u8(1).str("state_dict").u32(0).u32(0);
  REQUIRE_NOTHROW(io::decode(wrap_payload(w.bytes)));
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(w.bytes, 0)), Contains("invalid format version 0"));
}

TEST_CASE("bad files: absurd sizes are refused before allocating", "[io][bad_files]") {
  const std::int64_t two60 = std::int64_t{1} << 60;
  // A tensor claiming 2^60 elements (the byte count that would go with it).
  REQUIRE_THROWS_WITH(io::decode(one_tensor(0, {two60}, std::uint64_t{1} << 62, "")),
                      Contains("shape [1152921504606846976] has more than 2^48 elements"));
  REQUIRE_THROWS_WITH(io::decode(one_tensor(1, {1 << 30, 1 << 30}, 0, "")), Contains("more than 2^48"));
  // An empty shape whose other dims would overflow stride arithmetic.
  REQUIRE_THROWS_WITH(io::decode(one_tensor(0, {0, two60, two60}, 0, "")), Contains("more than 2^48"));
  // A plausible shape, but more bytes claimed than the file holds.
  REQUIRE_THROWS_WITH(io::decode(one_tensor(0, {1 << 20}, 4 << 20, std::string(16, '\0'))),
                      Contains("the payload ends inside the data of tensor \"w\": 4194304 bytes needed, 16 remain"));
  REQUIRE_THROWS_WITH(io::decode(one_tensor(0, {3}, 16, std::string(16, '\0'))),
                      Contains("should hold 12 bytes, the file says 16"));
  // Negative dims, too many dims, unknown dtype.
  REQUIRE_THROWS_WITH(io::decode(one_tensor(0, {2, -3}, 0, "")), Contains("negative dim in shape [2, -3]"));
  REQUIRE_THROWS_WITH(io::decode(one_tensor(0, std::vector<std::int64_t>(40, 1), 4, "abcd")),
                      Contains("has 40 dims (at most 32)"));
  REQUIRE_THROWS_WITH(io::decode(one_tensor(9, {1}, 4, "abcd")), Contains("unknown dtype code 9"));

  // Lengths and counts.
  ByteWriter long_name;
  long_name.u8(1).u64(std::uint64_t{1} << 60);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(long_name.bytes)),
                      Contains("the checkpoint kind claims 1152921504606846976 bytes (at most 4096)"));
  ByteWriter short_name;
  short_name.u8(1).u64(100).raw("abc");
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(short_name.bytes)), Contains("100 bytes needed, 3 remain"));
  ByteWriter many_meta;
  many_meta.u8(1).str("state_dict").u32(0xFFFFFFFFu);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(many_meta.bytes)), Contains("metadata count 4294967295 is over"));
  ByteWriter many_sections;
  many_sections.u8(1).str("state_dict").u32(0).u32(1u << 31);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(many_sections.bytes)), Contains("section count 2147483648 is over"));
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(payload_start(1u << 30).bytes)), Contains("claims 1073741824 tensors"));
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(payload_start(5).bytes)),
                      Contains("the payload ends inside the length of a tensor name"));
  ByteWriter meta_string;
  meta_string.u8(1).str("state_dict").u32(1).str("k").u8(2).u64(std::uint64_t{1} << 40);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(meta_string.bytes)), Contains("metadata \"k\" claims 1099511627776 bytes"));
}

TEST_CASE("bad files: malformed payload structure", "[io][bad_files]") {
  ByteWriter trailing = payload_start(0);
  trailing.raw("zz");
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(trailing.bytes)), Contains("2 unexpected bytes after the last section"));
  ByteWriter big_endian;
  big_endian.u8(0).str("state_dict").u32(0).u32(0);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(big_endian.bytes)), Contains("little-endian marker"));
  ByteWriter meta_type;
  meta_type.u8(1).str("state_dict").u32(1).str("k").u8(7);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(meta_type.bytes)), Contains("metadata \"k\" has unknown type code 7"));
  ByteWriter dup_meta;
  dup_meta.u8(1).str("state_dict").u32(2).str("k").u8(0).i64(1).str("k").u8(0).i64(2);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(dup_meta.bytes)), Contains("duplicate metadata key \"k\""));
  ByteWriter dup_section;
  dup_section.u8(1).str("state_dict").u32(0).u32(2).str("model").u32(0).str("model").u32(0);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(dup_section.bytes)), Contains("duplicate section \"model\""));
  ByteWriter dup_tensor = payload_start(2);
  for (int i = 0; i < 2; ++i) dup_tensor.str("w").u8(0).u8(0).u64(4).raw("abcd");
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(dup_tensor.bytes)), Contains("duplicate tensor \"w\""));
}

TEST_CASE("bad files: names that are not UTF-8 are refused on load", "[io][bad_files]") {
  ByteWriter w = payload_start();
  w.str("bad\xff\xfe").u8(0).u8(0).u64(4).raw("abcd");
  REQUIRE_THROWS_AS(io::decode(wrap_payload(w.bytes)), io::FormatError);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(w.bytes)), Contains("the name \"bad\\xff\\xfe\" is not valid UTF-8"));
  ByteWriter kind;
  kind.u8(1).str("\xc3").u32(0).u32(0);  // a truncated 2-byte sequence
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(kind.bytes)), Contains("not valid UTF-8"));
  ByteWriter empty;
  empty.u8(1).str("").u32(0).u32(0);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(empty.bytes)), Contains("the name is empty"));
  ByteWriter meta;
  meta.u8(1).str("state_dict").u32(1).str("k").u8(2).str("\xe2\x82").u32(0);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(meta.bytes)), Contains("metadata \"k\" is not valid UTF-8"));
  ByteWriter meta_nul;
  meta_nul.u8(1).str("state_dict").u32(1).str("k").u8(2).str(std::string("a\0b", 3)).u32(0);
  REQUIRE_THROWS_WITH(io::decode(wrap_payload(meta_nul.bytes)), Contains("metadata \"k\" contains a NUL character"));

  // JSON: raw invalid UTF-8, and an escaped control character in a name.
  std::string text = io::encode(small_checkpoint(), io::Format::json);
  std::string raw = text;
  raw.replace(raw.find("0.weight"), 1, "\xff");
  REQUIRE_THROWS_WITH(io::decode(raw), Contains("Invalid encoding in string"));
  std::string ctrl = text;
  ctrl.replace(ctrl.find("0.weight"), 1, "\\u0001");
  REQUIRE_THROWS_WITH(io::decode(ctrl), Contains("contains a control character"));
  std::string nul = text;
  nul.replace(nul.find("0.weight"), 1, "\\u0000");
  REQUIRE_THROWS_WITH(io::decode(nul), Contains("a string contains a NUL character"));
}

TEST_CASE("bad files: malformed JSON checkpoints", "[io][bad_files]") {
  const std::string text = io::encode(small_checkpoint(), io::Format::json);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const std::size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  REQUIRE_THROWS_WITH(io::decode("{\"a\":" + std::string(100000, '[')), Contains("nested deeper than 8"));
  REQUIRE_THROWS_WITH(io::decode("{\"magic\": \"tapegrad-checkpoint\",}"), Contains("invalid JSON at byte"));
  REQUIRE_THROWS_WITH(io::decode(text + "{}"), Contains("invalid JSON"));
  REQUIRE_THROWS_WITH(io::decode(std::string("{ \0 }", 5)), Contains("NUL byte at byte 2"));
  REQUIRE_THROWS_WITH(io::decode(edit("\"version\": 1", "\"version\": \"1\"")), Contains("malformed JSON checkpoint at \"version\""));
  REQUIRE_THROWS_WITH(io::decode(edit("\"version\": 1", "\"version\": 0")), Contains("invalid format version 0"));
  REQUIRE_THROWS_WITH(io::decode(edit("\"kind\"", "\"kinds\"")), Contains("(kind) not found"));
  REQUIRE_THROWS_WITH(io::decode(edit("\"float32\"", "\"float16\"")), Contains("unknown dtype \"float16\""));
  REQUIRE_THROWS_WITH(io::decode(edit("\"type\": \"int64\"", "\"type\": \"complex\"")), Contains("unknown type \"complex\""));
  // A shape of 2^60 elements with a short data array: refused before allocating.
  REQUIRE_THROWS_WITH(io::decode(edit("\"shape\": [\n", "\"shape\": [\n1152921504606846976,\n")),
                      Contains("more than 2^48 elements"));
  REQUIRE_THROWS_WITH(io::decode(edit("\"shape\": [\n", "\"shape\": [\n2,\n")), Contains("needs 24 values, \"data\" has 12"));
  REQUIRE_THROWS_WITH(io::decode(edit("\"shape\": [\n", "\"shape\": [\n-1,\n")), Contains("negative dim"));
  // A value edited by hand: the checksum catches it, and the message gives the new CRC.
  const std::size_t data = text.find("\"data\": [") + 9;
  std::string edited = text;
  edited.replace(edited.find_first_of("0123456789", data), 1, "7");
  REQUIRE_THROWS_WITH(io::decode(edited), Contains("is corrupted: checksum mismatch (stored crc32"));
  // A float32 value out of the float range (converting it would be undefined behaviour).
  std::string huge = text;
  const std::size_t first = huge.find_first_of("-0123456789", data);
  huge.replace(first, huge.find_first_of(",\n", first) - first, "1e300");
  REQUIRE_THROWS_WITH(io::decode(huge), Contains("has value 1e+300 outside the float32 range"));
}

TEST_CASE("bad files: empty file, directory, missing file, FIFO", "[io][bad_files]") {
  testing::ScratchDir dir;
  testing::write_bytes(dir.file("empty.tgc"), "");
  REQUIRE_THROWS_AS(io::load(dir.file("empty.tgc")), io::FormatError);
  REQUIRE_THROWS_WITH(io::load(dir.file("empty.tgc")), Contains("empty.tgc: the file is empty"));
  REQUIRE_THROWS_AS(io::load_safetensors(dir.file("empty.tgc")), io::FormatError);

  std::filesystem::create_directory(dir.file("sub"));
  REQUIRE_THROWS_AS(io::load(dir.file("sub")), io::IoError);
  REQUIRE_THROWS_WITH(io::load(dir.file("sub")), Contains("it is a directory"));
  REQUIRE_THROWS_AS(io::save_module(*testing::small_model(), dir.file("sub")), io::IoError);

  REQUIRE_THROWS_AS(io::load(dir.file("missing.tgc")), io::IoError);
  REQUIRE_THROWS_WITH(io::load(dir.file("missing.tgc")), Contains("missing.tgc': No such file or directory"));
  REQUIRE_THROWS_AS(io::load_safetensors(dir.file("missing.safetensors")), io::IoError);

  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(io::load(dir.file("fifo")), Contains("not a regular file"));  // and no hang
}

TEST_CASE("bad files: the corpus of fuzzer findings gives FormatError", "[io][bad_files][corpus]") {
  namespace fs = std::filesystem;
  int files = 0;
  for (const char* kind : {"checkpoint", "safetensors"}) {
    const fs::path dir = fs::path(corpus_dir()) / kind;
    REQUIRE(fs::is_directory(dir));
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
      ++files;
      const std::string bytes = testing::read_bytes(entry.path().string());
      INFO(entry.path().filename().string());
      if (std::string(kind) == "checkpoint") REQUIRE_THROWS_AS(io::decode(bytes), io::FormatError);
      else REQUIRE_THROWS_AS(io::decode_safetensors(bytes), io::FormatError);
    }
  }
  CHECK(files > 0);
}

TEST_CASE("bad files: the corpus's HC file with a residual scale its stream refuses is a FormatError", "[io][bad_files][corpus]") {
  // Found by the fuzzer: a Hyper-Connections model file whose residual_scale was mutated. The
  // config reads and validates; the stream refuses it when the model is built, with a
  // ValueError that escaped the loader (a FormatError is what a bad file gives).
  const std::string bytes = testing::read_bytes(corpus_dir() + "/checkpoint/hc_residual_scale_refused_by_the_stream.tgc");
  const io::Checkpoint c = io::decode(wrap_payload(bytes.substr(24)), "hc.tgc");
  REQUIRE(io::lm_config_from(c, "hc.tgc").block.residual_scale != 1.0);
  REQUIRE_THROWS_AS(io::model_from<nn::TransformerLM>(c, "hc.tgc"), io::FormatError);
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(c, "hc.tgc"),
                      Contains("hc.tgc: the stored model configuration is invalid: hyper_connections scales the residual "
                               "with its own H_res: leave residual_scale at 1"));
}

TEST_CASE("bad files: the corpus's mHC file whose hc_rate passes its tensors is refused by name", "[io][bad_files][corpus]") {
  // As found by the fuzzer its header's checksum is stale, so that io::decode stops there (the
  // corpus test above); with the header recomputed, as fuzz_load_checkpoint.cpp does, it decodes,
  // and the model config's check of the widened stream's n against the file refuses it.
  const std::string bytes = testing::read_bytes(corpus_dir() + "/checkpoint/mhc_hc_rate_past_the_file.tgc");
  REQUIRE_THROWS_WITH(io::decode(bytes), Contains("checksum mismatch"));
  const io::Checkpoint c = io::decode(wrap_payload(bytes.substr(24)), "mhc.tgc");
  REQUIRE(io::lm_config_from(c, "mhc.tgc").stream.hc_rate == 34306);
  REQUIRE(c.find_section("model")->at("stream.connections.0.b_post").shape() == Shape{2});
  // The message names the tensor that hc_rate sizes, the size hc_rate gives it, the setting
  // and the file's size.
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(c, "mhc.tgc"),
                      Contains("mhc.tgc: the stored model configuration makes stream.connections.0.b_post [34306] "
                               "(from its stream.hc_rate 34306), the file holds [2]"));
}

TEST_CASE("bad files: the hf_config corpus is refused by both config.json readers", "[io][bad_files][corpus][hf]") {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(corpus_dir()) / "hf_config")) {
    ++files;
    const std::string text = testing::read_bytes(entry.path().string());
    INFO(entry.path().filename().string());
    REQUIRE_THROWS_AS(io::gpt2_config_from_hf(io::HfConfig::parse(text, "config.json")), io::FormatError);
    REQUIRE_THROWS_AS(io::llama_config_from_hf(io::HfConfig::parse(text, "config.json")), io::FormatError);
  }
  CHECK(files > 0);
}
