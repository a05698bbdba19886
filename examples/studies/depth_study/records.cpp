// records.cpp — one file per finished run (records.hpp), and the records' binary form.
#include "records.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <tapegrad/io/checksum.hpp>
#include <tapegrad/io/file.hpp>

namespace depth_study {

// ---------------------------------------------------------------- the binary form

template <class Archive>
void serialize(Archive& a, Snapshot& s) {
  a(s.loss, s.grad_norm, s.rms, s.cosine, s.emb_output_grad, s.tok_emb_grad, s.total_grad);
}
template <class Archive>
void serialize(Archive& a, Setup& s) {
  a(s.init, s.tied_head, s.warmup);
}
// The traces as float32 (half the bytes; their figures are read to a few digits), the lr
// trace not at all (the schedule gives it back): a record of a 400-point run is about 5 KB.
template <class Archive>
void save(Archive& a, const TrainResult& r) {
  auto narrow = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  a(narrow(r.loss), r.steps_done, r.trace_stride, r.status, r.initial_loss, r.final_loss, r.plateau, r.val_loss,
    narrow(r.grad_norm), narrow(r.norm_grad_norm), r.seconds, r.step_seconds, r.interrupted);
}
template <class Archive>
void load(Archive& a, TrainResult& r) {
  std::vector<float> loss, grad_norm, norm_grad_norm;
  a(loss, r.steps_done, r.trace_stride, r.status, r.initial_loss, r.final_loss, r.plateau, r.val_loss, grad_norm,
    norm_grad_norm, r.seconds, r.step_seconds, r.interrupted);
  if (r.trace_stride < 1) throw tapegrad::ValueError("a trace stride of " + std::to_string(r.trace_stride));
  r.loss.assign(loss.begin(), loss.end());
  r.grad_norm.assign(grad_norm.begin(), grad_norm.end());
  r.norm_grad_norm.assign(norm_grad_norm.begin(), norm_grad_norm.end());
}
template <class Archive>
void serialize(Archive& a, TranslateRecord& r) {
  a(r.placement, r.layers, r.seed, r.diverged, r.val_loss, r.exact_match, r.token_accuracy, r.seconds, r.task);
}

namespace {

// A variant travels by its name (the records hold a pointer into the variant table);
// variant_from_name throws ValueError on a name it does not know.
template <class Archive>
void save_variant(Archive& a, const Variant* v) {
  a(v->name);
}
template <class Archive>
const Variant* load_variant(Archive& a) {
  std::string name;
  a(name);
  return &variant_from_name(name);
}

}  // namespace

std::string to_bytes(const Results& r) {
  std::ostringstream out(std::ios::binary);
  {
    cereal::BinaryOutputArchive a(out);
    a(static_cast<std::uint64_t>(r.profile.size()));
    for (ProfileRecord p : r.profile) a(p.init), save_variant(a, p.variant), a(p.depth, p.seed, p.at_init, p.seconds, p.task);
    a(static_cast<std::uint64_t>(r.trained.size()));
    for (TrainedRecord t : r.trained) {
      a(t.stage), save_variant(a, t.variant);
      a(t.depth, t.steps, t.lr, t.setup, t.seed, t.train, t.outcome, t.measured_after, t.after, t.skip_losses,
        t.measure_seconds, t.task);
    }
    a(r.translate);
  }
  return std::move(out).str();
}

Results from_bytes(const std::string& bytes) {
  std::istringstream in(bytes, std::ios::binary);
  Results r;
  try {
    cereal::BinaryInputArchive a(in);
    std::uint64_t n = 0;
    a(n);
    // A count larger than the bytes left cannot be right: refuse it before allocating.
    if (n > bytes.size()) throw tapegrad::ValueError("a count of " + std::to_string(n) + " profile records");
    for (std::uint64_t i = 0; i < n; ++i) {
      ProfileRecord p;
      a(p.init);
      p.variant = load_variant(a);
      a(p.depth, p.seed, p.at_init, p.seconds, p.task);
      r.profile.push_back(std::move(p));
    }
    a(n);
    if (n > bytes.size()) throw tapegrad::ValueError("a count of " + std::to_string(n) + " trained records");
    for (std::uint64_t i = 0; i < n; ++i) {
      TrainedRecord t;
      a(t.stage);
      t.variant = load_variant(a);
      a(t.depth, t.steps, t.lr, t.setup, t.seed, t.train, t.outcome, t.measured_after, t.after, t.skip_losses,
        t.measure_seconds, t.task);
      r.trained.push_back(std::move(t));
    }
    a(r.translate);
  } catch (const tapegrad::ValueError&) {
    throw;
  } catch (const std::exception& e) {  // cereal: read past the end; std::bad_alloc, std::length_error
    throw tapegrad::ValueError(std::string("records that do not read back: ") + e.what());
  }
  return r;
}

// ---------------------------------------------------------------- the files

namespace {

constexpr const char* kMagic = "tapegrad depth_study record 3\n";

// FNV-1a, 64 bits: a file name per key (the key itself is in the file and checked).
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

RecordStore::RecordStore(std::string dir, std::string shared_key, bool restart)
    : dir_(std::move(dir)), shared_key_(std::move(shared_key)) {
  if (restart && std::filesystem::exists(dir_))
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      if (entry.path().extension() == ".bin") std::filesystem::remove(entry.path());
  std::filesystem::create_directories(dir_);
}

std::string RecordStore::path_of(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(fnv1a(shared_key_ + "\n" + key)));
  return dir_ + "/" + name;
}

bool RecordStore::has(const std::string& key) const { return load(key).has_value(); }

std::optional<Results> RecordStore::load(const std::string& key) const {
  const std::string path = path_of(key);
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    const std::string bytes = tapegrad::io::read_file(path);
    const std::string head = kMagic + shared_key_ + "\n" + key + "\n";
    if (bytes.size() < head.size() + 4 || bytes.compare(0, head.size(), head) != 0)
      throw tapegrad::ValueError("another run's key, or not a record");
    const std::string payload = bytes.substr(head.size() + 4);
    std::uint32_t crc = 0;
    for (int i = 0; i < 4; ++i) crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[head.size() + i])) << (8 * i);
    if (crc != tapegrad::io::crc32(payload)) throw tapegrad::ValueError("its checksum does not match");
    return from_bytes(payload);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "depth_study: warning: %s is not a record of this run (%s): the run is done again\n", path.c_str(),
                 e.what());
    return std::nullopt;
  }
}

void RecordStore::save(const std::string& key, const Results& one) const {
  const std::string payload = to_bytes(one);
  std::string bytes = kMagic + shared_key_ + "\n" + key + "\n";
  const std::uint32_t crc = tapegrad::io::crc32(payload);
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  bytes += payload;
  tapegrad::io::write_file_atomic(path_of(key), bytes);
}

}  // namespace depth_study
