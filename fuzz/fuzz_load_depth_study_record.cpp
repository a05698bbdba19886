// fuzz_load_depth_study_record.cpp — libFuzzer target for the depth study's records files
// (examples/studies/depth_study/records.hpp): a study resumes from whatever its records folder
// holds, so reading one must never crash or read out of bounds, whatever its bytes.
//
// The input is read twice: as a payload (from_bytes: every length checked against the bytes
// left) and as a whole file under the head its seeds carry (read_record: the head, the CRC-32,
// then the payload). Anything but success or ValueError is a finding (an escaping exception
// aborts). A payload that reads must write back to bytes that read back to themselves (its
// canonical form: a bool's byte becomes 0 or 1, a float NaN quiet). Built and run by
// scripts/fuzz.sh; seeds in tests/io/corpus/seeds/depth_study_record/.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "depth_study/records.hpp"

using namespace depth_study;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const std::string canonical = to_bytes(from_bytes(bytes));
    if (to_bytes(from_bytes(canonical)) != canonical) std::abort();
  } catch (const tapegrad::ValueError&) {
  }
  try {
    read_record(bytes, record_head("fuzz", "run"));
  } catch (const tapegrad::ValueError&) {
  }
  return 0;
}
