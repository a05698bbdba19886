// The depth study's records (examples/studies/depth_study/records.hpp): a run's records read
// back field for field, and bytes that are not a whole record are refused with ValueError,
// never read out of bounds (fuzz/fuzz_load_depth_study_record.cpp feeds the same reader any
// bytes). Also the records folder: a record is found by its key only.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include <tapegrad/io/file.hpp>

#include "depth_study/records.hpp"

using namespace depth_study;
using Catch::Matchers::Contains;

namespace {

Results one_run() {
  Results r;
  ProfileRecord p;
  p.init = "gpt2", p.variant = &variant_from_name("pre"), p.depth = 3, p.seed = 2, p.seconds = 0.5, p.task = 4;
  p.at_init.loss = 4.5, p.at_init.grad_norm = {1, 2, 3}, p.at_init.rms = {0.5}, p.at_init.total_grad = 7;
  r.profile.push_back(p);
  TrainedRecord t;
  t.stage = "grid", t.variant = &variant_from_name("b2t"), t.depth = 12, t.steps = 400, t.lr = 3e-3, t.seed = 3;
  t.setup = Setup::parse("tied:gpt2:40");
  t.train.loss = {4.25, 3.5, NAN}, t.train.steps_done = 3, t.train.status = "non-finite", t.train.final_loss = 2.5;
  t.train.grad_norm = {1.5, INFINITY}, t.train.norm_grad_norm = {0.25, 0.125}, t.train.step_seconds = 1.25;
  t.outcome = "diverged", t.measured_after = true, t.skip_losses = {3.0, 3.25}, t.measure_seconds = 0.75;
  t.measured_stream = true, t.stream_rms_init = {1, 1.5}, t.stream_rms_after = {1, 4}, t.lens = {4.5, 3.25, 3.0};
  r.trained.push_back(t);
  r.translate.push_back({"post", 6, 1, false, 2.5, 0.25, 0.5, 9.0, 7});
  return r;
}

}  // namespace

TEST_CASE("depth study records read back field for field", "[depth_study][records]") {
  const Results back = from_bytes(to_bytes(one_run()));
  REQUIRE(back.profile.size() == 1);
  CHECK(back.profile[0].variant->name == "pre");
  CHECK(back.profile[0].at_init.grad_norm == std::vector<double>{1, 2, 3});
  CHECK(back.profile[0].seconds == 0.5);
  REQUIRE(back.trained.size() == 1);
  const TrainedRecord& t = back.trained[0];
  CHECK(t.variant->name == "b2t");
  CHECK(t.setup == Setup::parse("tied:gpt2:40"));
  CHECK(t.train.loss[0] == 4.25);
  CHECK(std::isnan(t.train.loss[2]));
  CHECK(std::isinf(t.train.grad_norm[1]));
  CHECK(t.train.steps_done == 3);
  CHECK(t.measured_after);
  CHECK(t.skip_losses == std::vector<double>{3.0, 3.25});
  CHECK(t.measured_stream);
  CHECK(t.stream_rms_init == std::vector<double>{1, 1.5});
  CHECK(t.stream_rms_after == std::vector<double>{1, 4});
  CHECK(t.lens == std::vector<double>{4.5, 3.25, 3.0});
  REQUIRE(back.translate.size() == 1);
  CHECK(back.translate[0].placement == "post");
  CHECK(back.translate[0].task == 7);
}

TEST_CASE("depth study records refuse bytes that are not a whole record", "[depth_study][records]") {
  const std::string good = to_bytes(one_run());
  SECTION("cut short anywhere") {
    for (std::size_t n = 0; n < good.size(); n += 7) CHECK_THROWS_AS(from_bytes(good.substr(0, n)), tapegrad::ValueError);
  }
  SECTION("a list's length far past the end is refused before it is allocated") {
    std::string bad = good;
    const std::uint64_t huge = std::uint64_t(1) << 60;
    std::memcpy(bad.data(), &huge, sizeof huge);  // the count of profile records
    CHECK_THROWS_WITH(from_bytes(bad), Contains("a length of 1152921504606846976"));
  }
  SECTION("bytes after the records") { CHECK_THROWS_WITH(from_bytes(good + "x"), Contains("1 bytes after the records")); }
  SECTION("a placement it does not know") {
    std::string bad = good;
    const auto at = bad.find("b2t");
    bad.replace(at, 3, "b3t");
    CHECK_THROWS_AS(from_bytes(bad), tapegrad::ValueError);
  }
  SECTION("a whole file: another key, or a changed byte, is not this run's record") {
    const std::string file = write_record(one_run(), record_head("shared", "run A"));
    CHECK(read_record(file, record_head("shared", "run A")).trained.size() == 1);
    CHECK_THROWS_WITH(read_record(file, record_head("shared", "run B")), Contains("another run's key"));
    std::string flipped = file;
    flipped.back() = static_cast<char>(flipped.back() ^ 1);
    CHECK_THROWS_WITH(read_record(flipped, record_head("shared", "run A")), Contains("checksum"));
  }
}

// A record of version 4, before the residual stream's measurements (the fuzzer's seed, made by
// that version with record_head("fuzz", "run")): the runs recorded then are not run again.
TEST_CASE("depth study records of version 4 read back, without the stream's measurements", "[depth_study][records]") {
  const std::string v4 = tapegrad::io::read_file(std::string(TAPEGRAD_SOURCE_DIR) + "/tests/io/corpus/seeds/depth_study_record/train_whole.record");
  REQUIRE(v4.rfind("tapegrad depth_study record 4\n", 0) == 0);
  const Results back = read_record(v4, record_head("fuzz", "run"));
  REQUIRE_FALSE(back.trained.empty());
  for (const TrainedRecord& t : back.trained) {
    CHECK_FALSE(t.measured_stream);
    CHECK(t.lens.empty());
  }
  CHECK_THROWS_WITH(read_record(v4, record_head("fuzz", "another run")), Contains("another run's key"));
  // and a version it never wrote is not a record
  std::string v3 = v4;
  v3[std::strlen("tapegrad depth_study record ")] = '3';
  CHECK_THROWS_WITH(read_record(v3, record_head("fuzz", "run")), Contains("another run's key"));
}

// The fuzzer's seeds are records this build reads (a seed that no longer reads would start the
// fuzzer from refusals only): the payloads, and the whole files of both versions.
TEST_CASE("depth study records: the fuzzer's seeds read back", "[depth_study][records]") {
  const std::filesystem::path dir = std::filesystem::path(TAPEGRAD_SOURCE_DIR) / "tests/io/corpus/seeds/depth_study_record";
  std::size_t payloads = 0, files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    INFO(entry.path().filename().string());
    const std::string bytes = tapegrad::io::read_file(entry.path().string());
    if (entry.path().extension() == ".payload") {
      CHECK_NOTHROW(from_bytes(bytes));
      ++payloads;
    }
    if (entry.path().extension() == ".record") {
      CHECK_NOTHROW(read_record(bytes, record_head("fuzz", "run")));
      ++files;
    }
  }
  CHECK(payloads == 4);
  CHECK(files == 2);
  const Results stream = read_record(tapegrad::io::read_file((dir / "stream_whole.record").string()), record_head("fuzz", "run"));
  REQUIRE(stream.trained.size() == 1);
  CHECK(stream.trained[0].measured_stream);
  CHECK(stream.trained[0].lens.size() == 4);
}

TEST_CASE("a records folder finds a run by its key and its shared settings", "[depth_study][records]") {
  const std::string dir = (std::filesystem::temp_directory_path() / "tapegrad_records_test").string();
  std::filesystem::remove_all(dir);
  {
    const RecordStore store(dir, "d_model 48", false);
    CHECK_FALSE(store.has("run A"));
    store.save("run A", one_run());
    CHECK(store.has("run A"));
    CHECK_FALSE(store.has("run B"));
    CHECK_FALSE(RecordStore(dir, "d_model 64", false).has("run A"));  // other shared settings: another run
  }
  CHECK_FALSE(RecordStore(dir, "d_model 48", true).has("run A"));     // --restart
  std::filesystem::remove_all(dir);
}
