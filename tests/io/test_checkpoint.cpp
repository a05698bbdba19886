// Tests of io/checkpoint: binary and JSON round trips (bit-exact), the header, versioning,
// metadata, saving never mutates, names refused on save, and atomic writes.
#include <cmath>
#include <limits>

#include "io_helpers.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;
using testing::same_bits;
using testing::same_state;
using testing::ScratchDir;

namespace {

// Every dtype, a 0-d tensor, an empty one, a non-contiguous view and special float values.
io::Checkpoint sample_checkpoint() {
  io::Checkpoint c;
  c.kind = "training";
  c.set("step", std::int64_t{1200});
  c.set("lr", 3e-4);
  c.set("note", std::string("naïve \"quoted\"\nline"));
  c.set("big", std::int64_t{-(std::int64_t{1} << 62) - 3});
  io::StateDict& model = c.section("model");
  model.insert("w", tensor({0.1, -2.5, 1e-45, 3.4028234663852886e38, -0.0, 1.0 / 3.0}, {2, 3}));
  model.insert("w_t", tensor({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1));
  model.insert("special", tensor({INFINITY, -INFINITY, NAN, 0.0}, {4}, DType::float64));
  model.insert("d", tensor({1.0 / 3.0, 1e300, -2.5e-300, 5e-324}, {2, 2}, DType::float64));
  model.insert("scalar", scalar_tensor(0.5));
  model.insert("empty", zeros({0, 3}));
  model.insert("ids", Tensor::from_vector(std::vector<std::int64_t>{(std::int64_t{1} << 53) + 1, -7, 0}, {3}));
  c.section("optimizer").insert("state.0.exp_avg", full({2}, 0.25, DType::float64));
  return c;
}

void check_equal(const io::Checkpoint& a, const io::Checkpoint& b) {
  CHECK(a.kind == b.kind);
  REQUIRE(a.metadata.size() == b.metadata.size());
  for (std::size_t i = 0; i < a.metadata.size(); ++i) {
    CHECK(a.metadata[i].first == b.metadata[i].first);
    CHECK(a.metadata[i].second == b.metadata[i].second);
  }
  REQUIRE(a.sections.size() == b.sections.size());
  for (std::size_t i = 0; i < a.sections.size(); ++i) {
    INFO("section " << a.sections[i].first);
    CHECK(a.sections[i].first == b.sections[i].first);
    CHECK(same_state(a.sections[i].second, b.sections[i].second));
  }
}

}  // namespace

TEST_CASE("checkpoint: binary round trip is bit-exact", "[io][checkpoint]") {
  const io::Checkpoint c = sample_checkpoint();
  const std::string bytes = io::encode(c);
  const io::Checkpoint back = io::decode(bytes);
  check_equal(back, c);
  CHECK(back.get_int("step") == 1200);
  CHECK(back.get_double("lr") == 3e-4);
  CHECK(back.get_string("note") == "naïve \"quoted\"\nline");
  CHECK(io::encode(back) == bytes);  // deterministic
}

TEST_CASE("checkpoint: JSON round trip is exact and readable", "[io][checkpoint]") {
  const io::Checkpoint c = sample_checkpoint();
  const std::string text = io::encode(c, io::Format::json);
  CHECK(text.rfind("{\n    \"magic\": \"tapegrad-checkpoint\",\n    \"version\": 1,", 0) == 0);
  CHECK_THAT(text, Contains("\"dtype\": \"float32\""));
  CHECK_THAT(text, Contains("0.1,"));  // 0.1f written as its shortest decimal, not 0.10000000149011612
  CHECK_THAT(text, Contains("NaN"));
  const io::Checkpoint back = io::decode(text);
  check_equal(back, c);  // bit-exact, including -0.0, denormals, FLT_MAX and NaN (a quiet NaN)
  CHECK(io::encode(back, io::Format::json) == text);
}

TEST_CASE("checkpoint: float32 values survive JSON bit for bit", "[io][checkpoint]") {
  // Random floats over many magnitudes, plus the smallest denormal and the largest float.
  Generator gen(7);
  std::vector<float> values;
  for (int i = 0; i < 2000; ++i) {
    const double mantissa = gen.next_double() * 2 - 1;
    const int exponent = static_cast<int>(gen.next_below(80)) - 40;
    values.push_back(static_cast<float>(std::ldexp(mantissa, exponent)));
  }
  values.push_back(std::numeric_limits<float>::denorm_min());
  values.push_back(std::numeric_limits<float>::max());
  values.push_back(-std::numeric_limits<float>::min());
  io::Checkpoint c;
  c.section("model").insert("x", Tensor::from_vector(values, {static_cast<std::int64_t>(values.size())}));
  const io::Checkpoint back = io::decode(io::encode(c, io::Format::json));
  CHECK(same_bits(back.find_section("model")->at("x"), c.find_section("model")->at("x")));
}

TEST_CASE("checkpoint: the binary header", "[io][checkpoint]") {
  CHECK(io::crc32("123456789") == 0xCBF43926u);  // the standard check value of CRC-32
  CHECK(io::crc32_update(io::crc32("12345"), "6789", 4) == 0xCBF43926u);
  const std::string bytes = io::encode(sample_checkpoint());
  REQUIRE(bytes.size() > 24);
  std::uint32_t version = 0, crc = 0;
  std::uint64_t size = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&crc, bytes.data() + 12, 4);
  std::memcpy(&size, bytes.data() + 16, 8);
  CHECK(bytes.substr(0, 8) == "TAPEGRAD");
  CHECK(version == 1);
  CHECK(size == bytes.size() - 24);
  CHECK(crc == io::crc32(std::string_view(bytes).substr(24)));
  CHECK(bytes[24] == 1);  // cereal's portable archive: little-endian marker
}

TEST_CASE("checkpoint: the bytes of a small file are frozen", "[io][checkpoint]") {
  // The 103-byte file of docs/checkpoint-format.md. If this test fails, the format changed:
  // bump kFormatVersion, keep a reader for version 1, and update the page.
  io::StateDict sd;
  sd.insert("w", tensor({1.0, 2.0}, {2}));
  io::Checkpoint c;
  c.sections.emplace_back("model", sd);
  const std::string bytes = io::encode(c);
  std::string hex;
  for (unsigned char b : bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[b >> 4];
    hex += kHex[b & 0xF];
  }
  CHECK(hex ==
        "544150454752414401000000715da3a64f00000000000000010a0000000000000073746174655f64696374000000"
        "000100000005000000000000006d6f64656c01000000010000000000000077000102000000000000000800000000"
        "0000000000803f00000040");
}

TEST_CASE("checkpoint: saving never mutates", "[io][checkpoint]") {
  auto model = testing::small_model();
  for (auto& p : model->parameters()) (p * 2.0).sum().backward();  // give the parameters grads
  const io::StateDict before = io::state_dict(*testing::small_model());
  const std::vector<Tensor> grads = [&] {
    std::vector<Tensor> g;
    for (auto& p : model->parameters()) g.push_back(p.grad().clone());
    return g;
  }();
  const std::string a = io::encode(io::Checkpoint{"state_dict", {}, {{"model", io::state_dict(*model)}}});
  const std::string b = io::encode(io::Checkpoint{"state_dict", {}, {{"model", io::state_dict(*model)}}},
                                   io::Format::json);
  CHECK(same_state(io::state_dict(*model), before));
  const auto params = model->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    CHECK(params[i].requires_grad());
    CHECK(params[i].is_leaf());
    CHECK(same_bits(params[i].grad(), grads[i]));
  }
  CHECK(io::encode(io::Checkpoint{"state_dict", {}, {{"model", io::state_dict(*model)}}}) == a);
  CHECK_FALSE(b.empty());
}

TEST_CASE("checkpoint: save_module / load_module in both formats", "[io][checkpoint]") {
  ScratchDir dir;
  for (io::Format format : {io::Format::binary, io::Format::json}) {
    const std::string path = dir.file(format == io::Format::json ? "model.json" : "model.tgc");
    auto source = testing::small_model(11), target = testing::small_model(12);
    save_module(*source, path, format);  // the tapegrad:: spelling
    REQUIRE(load_module(*target, path).ok());
    CHECK(same_state(io::state_dict(*target), io::state_dict(*source)));
    CHECK(same_state(io::load(path), io::state_dict(*source)));
    CHECK(io::load_checkpoint(path).kind == "state_dict");
  }
}

TEST_CASE("checkpoint: metadata and sections helpers", "[io][checkpoint]") {
  io::Checkpoint c;
  c.set("a", std::int64_t{1});
  c.set("b", std::string("x"));
  c.set("a", 2.5);  // replaced in place, order kept
  REQUIRE(c.metadata.size() == 2);
  CHECK(c.metadata[0].first == "a");
  CHECK(c.get_double("a") == 2.5);
  REQUIRE_THROWS_AS(c.get_int("a"), io::FormatError);
  REQUIRE_THROWS_WITH(c.get_int("a"), Contains("metadata \"a\" is not an integer"));
  REQUIRE_THROWS_WITH(c.get_string("zz"), Contains("has no metadata \"zz\""));
  CHECK(c.find_section("model") == nullptr);
  c.section("model").insert("w", ones({1}));
  CHECK(c.find_section("model")->size() == 1);
  CHECK(&c.section("model") == c.find_section("model"));

  ScratchDir dir;
  io::Checkpoint no_model;
  no_model.section("optimizer").insert("x", ones({1}));
  io::save_checkpoint(no_model, dir.file("opt.tgc"));
  REQUIRE_THROWS_AS(io::load(dir.file("opt.tgc")), io::FormatError);
  REQUIRE_THROWS_WITH(io::load(dir.file("opt.tgc")), Contains("has no section \"model\""));
}

TEST_CASE("checkpoint: names and dtypes that cannot be stored are refused on save", "[io][checkpoint]") {
  auto saving = [](const std::string& name) {
    io::Checkpoint c;
    c.section("model").insert(name, ones({1}));
    return c;
  };
  for (io::Format format : {io::Format::binary, io::Format::json}) {
    REQUIRE_THROWS_AS(io::encode(saving("bad\xff\xfe"), format), ValueError);
    REQUIRE_THROWS_WITH(io::encode(saving("bad\xff\xfe"), format), Contains("is not valid UTF-8"));
    REQUIRE_THROWS_WITH(io::encode(saving("\xc0\xaf"), format), Contains("not valid UTF-8"));  // overlong '/'
    REQUIRE_THROWS_WITH(io::encode(saving("\xed\xa0\x80"), format), Contains("not valid UTF-8"));  // surrogate
    REQUIRE_THROWS_WITH(io::encode(saving(""), format), Contains("the name is empty"));
    REQUIRE_THROWS_WITH(io::encode(saving("tab\there"), format), Contains("control character"));
    REQUIRE_THROWS_WITH(io::encode(saving(std::string(5000, 'a')), format), Contains("5000 bytes long"));
    CHECK_NOTHROW(io::encode(saving("блок.0.вес"), format));  // any valid UTF-8 is fine
  }
  io::Checkpoint c;
  c.section("model").insert("w", Tensor::empty({2}, DType::bfloat16, true));
  REQUIRE_THROWS_AS(io::encode(c), DTypeError);
  REQUIRE_THROWS_WITH(io::encode(c), Contains("\"w\" has dtype bfloat16"));

  io::Checkpoint dup;
  dup.sections.emplace_back("model", io::StateDict());
  dup.sections.emplace_back("model", io::StateDict());
  REQUIRE_THROWS_WITH(io::encode(dup), Contains("duplicate section \"model\""));
  io::Checkpoint meta;
  meta.metadata.emplace_back("k", std::string("\xff"));
  REQUIRE_THROWS_WITH(io::encode(meta), Contains("metadata \"k\" is not valid UTF-8"));
  io::Checkpoint nul;
  nul.metadata.emplace_back("k", std::string("a\0b", 3));
  REQUIRE_THROWS_WITH(io::encode(nul, io::Format::json), Contains("metadata \"k\" contains a NUL character"));
}

TEST_CASE("checkpoint: a file of a newer format version is refused", "[io][checkpoint]") {
  std::string bytes = io::encode(sample_checkpoint());
  const std::uint32_t newer = io::kFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &newer, 4);
  REQUIRE_THROWS_AS(io::decode(bytes, "future.tgc"), io::FormatError);
  REQUIRE_THROWS_WITH(io::decode(bytes, "future.tgc"),
                      Contains("future.tgc: format version 2 is newer than this build of tapegrad reads "
                               "(up to version 1); upgrade tapegrad"));

  std::string text = io::encode(sample_checkpoint(), io::Format::json);
  const std::size_t at = text.find("\"version\": 1");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"version\": 2");
  REQUIRE_THROWS_WITH(io::decode(text, "future.json"), Contains("format version 2 is newer"));
}

TEST_CASE("checkpoint: a failed save leaves the previous file intact and no temporary file", "[io][checkpoint]") {
  ScratchDir dir;
  const std::string path = dir.file("model.tgc");
  auto first = testing::small_model(1), second = testing::small_model(2);
  io::save_module(*first, path);
  const std::string good = testing::read_bytes(path);
  const std::size_t full = io::encode(io::Checkpoint{"state_dict", {}, {{"model", io::state_dict(*second)}}}).size();
  for (std::int64_t after : {std::int64_t{0}, std::int64_t{1}, std::int64_t{24}, static_cast<std::int64_t>(full / 2),
                             static_cast<std::int64_t>(full - 1)}) {
    INFO("failing after " << after << " of " << full << " bytes");
    {
      io::testing::FailWritesAfter fail(after);
      REQUIRE_THROWS_AS(io::save_module(*second, path), io::IoError);
      REQUIRE_THROWS_WITH(io::save_module(*second, path), Contains("injected write failure"));
    }
    CHECK(testing::read_bytes(path) == good);
    CHECK(dir.entries() == std::vector<std::string>{"model.tgc"});
  }
  // Without the injected failure the same save goes through.
  io::save_module(*second, path);
  CHECK(same_state(io::load(path), io::state_dict(*second)));
  CHECK(dir.entries() == std::vector<std::string>{"model.tgc"});

  // A first save that fails leaves nothing behind at all.
  {
    io::testing::FailWritesAfter fail(10);
    REQUIRE_THROWS_AS(io::save_module(*second, dir.file("new.tgc")), io::IoError);
  }
  CHECK(dir.entries() == std::vector<std::string>{"model.tgc"});
}

TEST_CASE("checkpoint: writing into a missing directory is an IoError naming it", "[io][checkpoint]") {
  ScratchDir dir;
  const std::string path = dir.file("no/such/dir/model.tgc");
  REQUIRE_THROWS_AS(io::save_module(*testing::small_model(), path), io::IoError);
  REQUIRE_THROWS_WITH(io::save_module(*testing::small_model(), path), Contains("no/such/dir"));
}

TEST_CASE("checkpoint: the example of docs/checkpoint-format.md runs", "[io][checkpoint][docs]") {
  ScratchDir dir;
  const std::string path = dir.file("model.tgc"), json_path = dir.file("model.json");
#include "checkpoint_example.inc"
  CHECK(result.ok());
  CHECK(same_bits(copy->weight, model->weight));
  CHECK(step == 1200);
  CHECK(same_state(io::load(json_path), io::state_dict(*model)));

  // The page shows exactly this file.
  const std::string doc = testing::read_bytes(std::string(TAPEGRAD_REFERENCE_DIR) + "/../../docs/checkpoint-format.md");
  const std::string example = testing::read_bytes(std::string(TAPEGRAD_REFERENCE_DIR) + "/../io/checkpoint_example.inc");
  const std::size_t begin = doc.find("```cpp\n");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = doc.find("```", begin + 7);
  CHECK(doc.substr(begin + 7, end - begin - 7) == example);
}
