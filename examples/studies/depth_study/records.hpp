// records.hpp — the finished runs of a study on disk, one file per run, so that a study stopped
// by Ctrl-C, a kill or the end of a session resumes where it stopped without redoing any run.
//
//   --out/records/<key hash>.bin    one run's records, written atomically when the run ends
//
// A run is named by its key: what the run is ("grid post L=12 lr 0.003 ... seed 2") and every
// setting it shares with the others (the model's shape, the data, the optimizer: the shared
// key). A study started again with the same --out finds the runs whose key it plans and
// reuses them, even when the plan itself changed (more seeds, another depth); a run whose
// settings differ has another key, so it is never mistaken for one. A record made by an
// older build of the study is reused all the same: --restart discards every record.
//
// Each file is "tapegrad depth_study record 5\n", the key, the CRC-32 of the payload and the
// payload (records.cpp's binary form of a Results holding that one run). A file that does not
// read back whole, with its key and checksum (a stray file, a disk error), is not a record:
// the run is done again, with a warning. A record of version 4 (before the residual stream's
// measurements) reads back with the same key, without them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "stages.hpp"

namespace depth_study {

class RecordStore {
 public:
  // Opens (creates) dir. With restart, first removes every record in it.
  RecordStore(std::string dir, std::string shared_key, bool restart);

  // Whether the run of this key has a record that reads back.
  bool has(const std::string& key) const;
  // Its records, or nullopt (and a warning on stderr when a file was there but did not read).
  std::optional<Results> load(const std::string& key) const;
  // Writes one run's records atomically.
  void save(const std::string& key, const Results& one) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string path_of(const std::string& key) const;
  std::string dir_, shared_key_;
};

// A records file's bytes: record_head(shared_key, key), the CRC-32 of the payload (4 bytes,
// little-endian), the payload (to_bytes). read_record throws ValueError on bytes that are not
// one whole record under this head (fuzz/fuzz_load_depth_study_record.cpp feeds it any bytes).
std::string record_head(const std::string& shared_key, const std::string& key);
std::string write_record(const Results& one, const std::string& head);
Results read_record(const std::string& bytes, const std::string& head);

// A run's records as bytes and back (the records file's payload, and what MPI ranks send to
// rank 0). from_bytes throws ValueError on bytes it cannot read whole.
std::string to_bytes(const Results& r);
Results from_bytes(const std::string& bytes);
// The payload of a record of an older version (4 or 5).
Results from_bytes(const std::string& bytes, int version);

}  // namespace depth_study
