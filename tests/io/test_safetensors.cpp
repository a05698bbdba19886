// Tests of io/safetensors: a file written by PyTorch (tests/reference/torch_model.safetensors,
// made by make_safetensors_reference.py) is read with the right values, runs the same model in
// tapegrad, and is written back byte for byte; plus the strict reader's refusals.
#include <tapegrad/io/json.hpp>

#include "io_helpers.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;
using testing::same_bits;

namespace {

const std::string& torch_file_path() {
  static const std::string path = std::string(TAPEGRAD_REFERENCE_DIR) + "/torch_model.safetensors";
  return path;
}

const testing::ReferenceFile& expected() {
  static const testing::ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/safetensors_reference.txt");
  return file;
}

const std::vector<std::string> kNames = {"0.weight", "0.bias",    "1.weight",     "1.bias",     "2.weight",
                                         "2.bias",   "extra.f64", "extra.i64", "extra.scalar", "extra.empty"};

std::string craft(const std::string& header, const std::string& data = "") {
  return testing::craft_safetensors(header, data);
}

}  // namespace

TEST_CASE("safetensors: reads the file PyTorch wrote", "[io][safetensors]") {
  const io::SafetensorsFile file = io::load_safetensors(torch_file_path());
  CHECK(file.metadata == io::SafetensorsMetadata{{"format", "pt"}, {"producer", "make_safetensors_reference.py"}});
  std::vector<std::string> names;
  for (const auto& [name, t] : file.tensors) {
    names.push_back(name);
    const testing::ReferenceTensor& ref = expected().entry("tensor." + name);
    INFO(name);
    CHECK(t.shape() == ref.shape);
    if (name == "extra.f64") CHECK(t.dtype() == DType::float64);
    else if (name == "extra.i64") CHECK(t.dtype() == DType::int64);
    else CHECK(t.dtype() == DType::float32);
    // Exact: float32 values are exact in the reference's float64 text, int64 as integers.
    if (t.dtype() == DType::int64) CHECK(t.to_vector<std::int64_t>() == ref.ints);
    else CHECK(t.to_vector<double>() == ref.values);
  }
  CHECK(names == kNames);
  CHECK(file.tensors.at("extra.i64").to_vector<std::int64_t>()[0] == (std::int64_t{1} << 53) + 1);
}

TEST_CASE("safetensors: the PyTorch weights run the same model in tapegrad", "[io][safetensors]") {
  auto model = testing::small_model(99);
  const io::SafetensorsFile file = io::load_safetensors(torch_file_path());
  REQUIRE_THROWS_WITH(io::load_state_dict(*model, file.tensors), Contains("unexpected key(s) \"extra.f64\""));
  const io::LoadResult r = io::load_state_dict(*model, file.tensors, false);
  CHECK(r.missing_keys.empty());
  CHECK(r.unexpected_keys == std::vector<std::string>{"extra.f64", "extra.i64", "extra.scalar", "extra.empty"});
  const Tensor y = model->forward(expected().get("x", DType::float32));
  CHECK_CLOSE("y", y, expected().get("y"), 1e-5, 1e-5);
}

TEST_CASE("safetensors: writing back what was read gives the same bytes", "[io][safetensors]") {
  const std::string original = testing::read_bytes(torch_file_path());
  const io::SafetensorsFile file = io::decode_safetensors(original);
  CHECK(io::encode_safetensors(file.tensors, file.metadata) == original);

  testing::ScratchDir dir;
  io::save_safetensors(file.tensors, dir.file("copy.safetensors"), file.metadata);
  CHECK(testing::read_bytes(dir.file("copy.safetensors")) == original);
}

TEST_CASE("safetensors: tapegrad's own export re-imports", "[io][safetensors]") {
  auto model = testing::small_model(4);
  io::StateDict sd = io::state_dict(*model);
  sd.insert("view", tensor({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1));  // non-contiguous
  sd.insert("ids", Tensor::from_vector(std::vector<std::int64_t>{-1, 1 << 30}, {2}));
  sd.insert("naïve", zeros({0}, DType::float64));
  const std::string bytes = io::encode_safetensors(sd);
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  CHECK(header_size % 8 == 0);
  CHECK(bytes.substr(8, 12) == "{\"0.weight\":");  // no "__metadata__" when there is none
  const io::SafetensorsFile back = io::decode_safetensors(bytes);
  CHECK(back.metadata.empty());
  CHECK(testing::same_state(back.tensors, sd));
  CHECK(io::encode_safetensors(back.tensors) == bytes);
}

TEST_CASE("safetensors: what cannot be written is refused", "[io][safetensors]") {
  io::StateDict sd;
  sd.insert("__metadata__", ones({1}));
  REQUIRE_THROWS_WITH(io::encode_safetensors(sd), Contains("\"__metadata__\" is reserved"));
  io::StateDict bad_name;
  bad_name.insert("w\xff", ones({1}));
  REQUIRE_THROWS_AS(io::encode_safetensors(bad_name), ValueError);
  REQUIRE_THROWS_WITH(io::encode_safetensors(bad_name), Contains("not valid UTF-8"));
  io::StateDict bf16;
  bf16.insert("w", Tensor::empty({1}, DType::bfloat16, true));
  REQUIRE_THROWS_AS(io::encode_safetensors(bf16), DTypeError);
  REQUIRE_THROWS_WITH(io::encode_safetensors({}, {{"k", "a"}, {"k", "b"}}), Contains("duplicate metadata key \"k\""));
  REQUIRE_THROWS_WITH(io::encode_safetensors({}, {{"k", "\xff"}}), Contains("not valid UTF-8"));
  // Quoting matches Python's json.dumps(ensure_ascii=False).
  io::StateDict quoted;
  quoted.insert("a\"b\\c", ones({1}));
  const std::string bytes = io::encode_safetensors(quoted, {{"note", "tab\there\x01"}});
  CHECK_THAT(bytes, Contains(R"({"__metadata__":{"note":"tab\there\u0001"},"a\"b\\c":{"dtype":"F32")"));
  CHECK(io::decode_safetensors(bytes).metadata[0].second == "tab\there\x01");
}

TEST_CASE("safetensors: truncated or flipped files never crash", "[io][safetensors]") {
  const std::string original = testing::read_bytes(torch_file_path());
  for (std::size_t n = 0; n < original.size(); ++n) {
    INFO("truncated to " << n << " bytes");
    REQUIRE_THROWS_AS(io::decode_safetensors(original.substr(0, n)), io::FormatError);
  }
  // The format has no checksum: a flip in the data changes a value unnoticed, but every flip in
  // the length or the header is either refused or still describes a valid layout.
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, original.data(), 8);
  int refused = 0;
  for (std::size_t i = 0; i < 8 + header_size; ++i) {
    std::string bad = original;
    bad[i] = static_cast<char>(bad[i] ^ 0x04);
    try {
      io::decode_safetensors(bad);
    } catch (const io::FormatError&) {
      ++refused;
    }
  }
  CHECK(refused > static_cast<int>(header_size) / 2);
}

TEST_CASE("safetensors: bad headers give clear errors", "[io][safetensors]") {
  const std::string f32 = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  REQUIRE_NOTHROW(io::decode_safetensors(craft("{\"w\":{" + f32 + "}}", std::string(8, '\0'))));

  REQUIRE_THROWS_WITH(io::decode_safetensors(std::string(5, '\0'), "m.st"), Contains("m.st: truncated: 5 bytes"));
  testing::ByteWriter absurd;
  absurd.u64(std::uint64_t{1} << 60).raw("{}");
  REQUIRE_THROWS_WITH(io::decode_safetensors(absurd.bytes), Contains("header length 1152921504606846976 is over 16 MiB"));
  testing::ByteWriter past;
  past.u64(100).raw("{}");
  REQUIRE_THROWS_WITH(io::decode_safetensors(past.bytes), Contains("the header claims 100 bytes, only 2 follow"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(" {}")), Contains("must start with '{'"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{\"w\":}")), Contains("unexpected character at byte 5"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{} x")), Contains("unexpected text after the JSON value"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{\"a\":[[[[[]]]]]}")), Contains("nested deeper than 4 levels"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{\"w\":{" + f32 + "},\"w\":{" + f32 + "}}", std::string(16, '\0'))),
                      Contains("duplicate key \"w\""));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{\"w\xff\":{" + f32 + "}}", std::string(8, '\0'))),
                      Contains("string is not valid UTF-8"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{\"w\\ud800\":{" + f32 + "}}", std::string(8, '\0'))),
                      Contains("lone high surrogate"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("{\"w\":{" + f32 + ",\"extra\":1}}", std::string(8, '\0'))),
                      Contains("unknown field \"extra\""));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(R"({"w":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})", "abcd")),
                      Contains("has dtype \"I32\"; tapegrad reads F32, F64, I64, F16 and BF16"));
  REQUIRE_THROWS_WITH(
      io::decode_safetensors(craft(R"({"w":{"dtype":"F32","shape":[1152921504606846976],"data_offsets":[0,8]}})", std::string(8, '\0'))),
      Contains("has a dim of 1152921504606846976"));
  REQUIRE_THROWS_WITH(
      io::decode_safetensors(craft(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", std::string(8, '\0'))),
      Contains("a dim must be a non-negative integer, got -2"));
  REQUIRE_THROWS_WITH(
      io::decode_safetensors(craft(R"({"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", std::string(8, '\0'))),
      Contains("got 2.0"));
  REQUIRE_THROWS_WITH(
      io::decode_safetensors(craft(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,99999999999999999999]}})")),
      Contains("data_offsets[1] is too large"));
  REQUIRE_THROWS_WITH(
      io::decode_safetensors(craft(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", std::string(8, '\0'))),
      Contains("outside the 8 data bytes"));
  REQUIRE_THROWS_WITH(
      io::decode_safetensors(craft(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0'))),
      Contains("needs 12 bytes, its data_offsets span 8"));
  // Overlap, gap, bytes left over.
  const std::string two = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[)";
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(two + "4,12]}}", std::string(12, '\0'))), Contains("must not overlap or leave gaps"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(two + "12,20]}}", std::string(20, '\0'))), Contains("starts at data byte 12, expected 8"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(two + "8,16]}}", std::string(20, '\0'))), Contains("4 data bytes after the last tensor"));
  REQUIRE_NOTHROW(io::decode_safetensors(craft(two + "8,16]}}", std::string(16, '\0'))));
  // Metadata must map strings to strings; tensor entries must be objects.
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(R"({"__metadata__":{"k":1}})")), Contains("metadata \"k\" must be a string"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(R"({"__metadata__":[]})")), Contains("\"__metadata__\" must be an object"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(R"({"w":[]})")), Contains("tensor \"w\" must be an object, got an array"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft("[]")), Contains("must start with '{'"));
  REQUIRE_THROWS_WITH(io::decode_safetensors(craft(R"({"w\u0001":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})")),
                      Contains("contains a control character"));
}

TEST_CASE("json: the parser's own rules", "[io][safetensors][json]") {
  using io::json::parse;
  const auto v = parse(R"( {"a": [1, -2.5e3, true, false, null, "x\u00e9\ud83d\ude00"], "b": {}} )", "t");
  REQUIRE(v.kind == io::json::Value::Kind::object);
  const auto& a = v.find("a")->items;
  REQUIRE(a.size() == 6);
  CHECK(a[1].text == "-2.5e3");
  CHECK(a[5].text == "x\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(io::json::to_uint64(parse("18446744073709551615", "t"), "n") == UINT64_MAX);
  REQUIRE_THROWS_WITH(io::json::to_uint64(parse("18446744073709551616", "t"), "n"), Contains("n is too large"));
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "[1,]", "{\"a\"}", "\"\\x\"", "\"a\nb\"", "tru", "NaN", ""})
    REQUIRE_THROWS_AS(parse(bad, "t"), io::FormatError);
  REQUIRE_THROWS_WITH(parse("[0,0,0,0,0]", "t", {.max_depth = 4, .max_values = 4}), Contains("more than 4 values"));
  CHECK(io::json::quote("a\"\\\n\x1f" "é") == "\"a\\\"\\\\\\n\\u001fé\"");
  CHECK(io::is_valid_utf8("\xf4\x8f\xbf\xbf"));   // U+10FFFF
  CHECK_FALSE(io::is_valid_utf8("\xf4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(io::is_valid_utf8("\xe0\x80\xaf"));  // overlong
}
