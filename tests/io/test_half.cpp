// Tests of io/half: every F16 and BF16 bit pattern widens to float32 and narrows back to
// itself, and float32 -> F16/BF16 rounds like torch 1.13's .to(torch.float16/bfloat16) on the
// halfway cases, overflow, subnormals and NaN; plus safetensors files holding F16/BF16.
#include <bit>
#include <cmath>
#include <tapegrad/io/half.hpp>
#include <tapegrad/io/json.hpp>

#include "io_helpers.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;

TEST_CASE("half: all 65536 F16 and BF16 patterns round-trip through float32", "[io][half]") {
  int f16_bad = 0, bf16_bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    if (io::float_to_f16(io::f16_to_float(h)) != h) ++f16_bad;
    if (io::float_to_bf16(io::bf16_to_float(h)) != h) ++bf16_bad;
  }
  CHECK(f16_bad == 0);
  CHECK(bf16_bad == 0);
  // Widening is exact: spot values, subnormals included.
  CHECK(io::f16_to_float(0x3c00) == 1.0f);
  CHECK(io::f16_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(io::f16_to_float(0x03ff) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(io::f16_to_float(0x7bff) == 65504.0f);
  CHECK(io::f16_to_float(0xfc00) == -INFINITY);
  CHECK(std::isnan(io::f16_to_float(0x7e00)));
  CHECK(io::bf16_to_float(0x3f80) == 1.0f);
  CHECK(std::signbit(io::bf16_to_float(0x8000)));
}

TEST_CASE("half: float32 narrows like torch (round to nearest even)", "[io][half]") {
  // float32 bits -> torch 1.13's float16 and bfloat16 bits, from
  //   torch.tensor(v).to(torch.float16 / torch.bfloat16).view(torch.int16)
  // v: 1+2^-8, 1+3·2^-8, 1+2^-8+2^-20, 65519, 65520, 2^-25, 1.5·2^-25, 2.5·2^-24, 1+2^-11,
  //    1+3·2^-11, pi, -0.1, 1e-6, 6.1e-5, 3.4e38, inf
  struct Case {
    std::uint32_t f32;
    std::uint16_t f16, bf16;
  };
  const Case cases[] = {
      {0x3f808000u, 0x3c04, 0x3f80}, {0x3f818000u, 0x3c0c, 0x3f82}, {0x3f808008u, 0x3c04, 0x3f81},
      {0x477fef00u, 0x7bff, 0x4780}, {0x477ff000u, 0x7c00, 0x4780}, {0x33000000u, 0x0000, 0x3300},
      {0x33400000u, 0x0001, 0x3340}, {0x34200000u, 0x0002, 0x3420}, {0x3f801000u, 0x3c00, 0x3f80},
      {0x3f803000u, 0x3c02, 0x3f80}, {0x40490fdbu, 0x4248, 0x4049}, {0xbdcccccdu, 0xae66, 0xbdcd},
      {0x358637bdu, 0x0011, 0x3586}, {0x387fda40u, 0x03ff, 0x3880}, {0x7f7fc99eu, 0x7c00, 0x7f80},
      {0x7f800000u, 0x7c00, 0x7f80},
  };
  for (const Case& c : cases) {
    const float v = std::bit_cast<float>(c.f32);
    INFO("float32 bits " << std::hex << c.f32);
    CHECK(io::float_to_f16(v) == c.f16);
    CHECK(io::float_to_bf16(v) == c.bf16);
    CHECK(io::float_to_f16(-v) == (c.f16 ^ 0x8000));
    CHECK(io::float_to_bf16(-v) == (c.bf16 ^ 0x8000));
  }
  // NaN stays NaN (torch's vectorised BF16 path writes 0xffff, its scalar one 0x7fc0: any NaN).
  CHECK(std::isnan(io::f16_to_float(io::float_to_f16(NAN))));
  CHECK(std::isnan(io::bf16_to_float(io::float_to_bf16(NAN))));
  CHECK(std::isnan(io::bf16_to_float(io::float_to_bf16(std::bit_cast<float>(0x7f800001u)))));  // payload in dropped bits
  CHECK(std::isnan(io::f16_to_float(io::float_to_f16(std::bit_cast<float>(0x7f800001u)))));
}

namespace {

std::string craft(const std::string& header, const std::string& data = "") {
  return testing::craft_safetensors(header, data);
}

}  // namespace

TEST_CASE("safetensors: F16 and BF16 read as float32 and written with rounding", "[io][safetensors][half]") {
  // 1.0, -2.0, 65504 (F16 max) | 1.0, -0.5 in BF16, little-endian.
  const std::string data = std::string("\x00\x3c\x00\xc0\xff\x7b", 6) + std::string("\x80\x3f\x00\xbf", 4);
  const auto file = io::decode_safetensors(craft(R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},)"
                                                 R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[6,10]}})",
                                                 data));
  const Tensor a = file.tensors.at("a"), b = file.tensors.at("b");
  REQUIRE(a.dtype() == DType::float32);
  CHECK(a.to_vector<float>() == std::vector<float>{1.0f, -2.0f, 65504.0f});
  CHECK(b.to_vector<float>() == std::vector<float>{1.0f, -0.5f});

  // Writing float32 as F16/BF16 and reading back gives the rounded values; int64 stays I64.
  io::StateDict state;
  state.insert("w", Tensor::from_vector(std::vector<float>{1.0f + 1.0f / 256, 3.14159265f, 1e6f}, {3}));
  state.insert("i", Tensor::from_vector(std::vector<std::int64_t>{7}, {1}));
  const std::string f16 = io::encode_safetensors(state, {}, io::SafetensorsFloat::f16);
  CHECK_THAT(f16, Contains("\"F16\"") && Contains("\"I64\""));
  const auto back16 = io::decode_safetensors(f16);
  CHECK(back16.tensors.at("w").to_vector<float>() ==
        std::vector<float>{io::f16_to_float(0x3c04), io::f16_to_float(0x4248), INFINITY});
  CHECK(back16.tensors.at("i").to_vector<std::int64_t>() == std::vector<std::int64_t>{7});
  const auto back_bf = io::decode_safetensors(io::encode_safetensors(state, {}, io::SafetensorsFloat::bf16));
  CHECK(back_bf.tensors.at("w").to_vector<float>()[0] == 1.0f);  // 1+2^-8 is a tie: to even
  // Re-encoding what was read as F16 gives the same bytes.
  CHECK(io::encode_safetensors(back16.tensors, {}, io::SafetensorsFloat::f16) == f16);
}

TEST_CASE("safetensors: F16 and BF16 keep the reader's strictness", "[io][safetensors][half]") {
  // 3 F16 elements are 6 bytes, not 12 (as F32 would be) nor 4.
  CHECK_THROWS_WITH(io::decode_safetensors(craft(R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,12]}})",
                                                 std::string(12, '\0'))),
                    Contains("\"a\"") && Contains("needs 6 bytes") && Contains("F16"));
  CHECK_THROWS_WITH(io::decode_safetensors(craft(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})",
                                                 std::string(6, '\0'))),
                    Contains("2 data bytes after the last tensor"));
  CHECK_THROWS_WITH(io::decode_safetensors(craft(R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})",
                                                 std::string(1, '\0'))),
                    Contains("F16 and BF16"));
}
