// records.cpp — one file per finished run (records.hpp), and the records' binary form.
#include "records.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <type_traits>

#include <tapegrad/io/checksum.hpp>
#include <tapegrad/io/file.hpp>

namespace depth_study {

// ---------------------------------------------------------------- the binary form
//
// Every number as its bytes (this machine's byte order: records are read back by the machine,
// or the cluster, that wrote them), a bool as one byte, strings and lists after their 8-byte
// length. The reader checks each length against the bytes left before it allocates, so that no
// file, whatever its bytes, makes it read out of bounds or allocate beyond the file's size.
// (Not cereal's binary archive: it trusts a list's length and allocates it, whatever it is.)

namespace {

// 5: the residual stream's measurements (TrainedRecord::measured_stream and what it measured);
// the records of version 4 read back without them, so that no run recorded before is redone.
constexpr int kVersion = 5, kOldestVersion = 4;

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

class Writer {
 public:
  static constexpr int version = kVersion;
  template <class... T>
  void operator()(const T&... v) {
    (put(v), ...);
  }
  std::string bytes;

 private:
  template <class T>
  void put(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      bytes.push_back(v ? 1 : 0);
    } else if constexpr (std::is_arithmetic_v<T>) {
      bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      put(static_cast<std::uint64_t>(v.size()));
      bytes += v;
    } else if constexpr (is_vector<T>::value) {
      put(static_cast<std::uint64_t>(v.size()));
      for (const auto& x : v) put(x);
    } else {
      fields(*this, const_cast<T&>(v));  // the struct's fields, in the order fields() lists them
    }
  }
};

class Reader {
 public:
  Reader(const std::string& bytes, int version) : version(version), bytes_(bytes) {}
  const int version;  // of the records read: the fields a version lacks keep their defaults
  template <class... T>
  void operator()(T&... v) {
    (get(v), ...);
  }
  std::size_t left() const { return bytes_.size() - at_; }

 private:
  void take(void* to, std::size_t n) {
    if (n > left()) throw tapegrad::ValueError("the records end " + std::to_string(n - left()) + " bytes early");
    std::memcpy(to, bytes_.data() + at_, n);
    at_ += n;
  }
  // A length, refused when even elements of `min_bytes` each could not fit in the bytes left.
  std::size_t length(std::size_t min_bytes) {
    std::uint64_t n = 0;
    take(&n, sizeof n);
    if (n > left() / std::max<std::size_t>(1, min_bytes))
      throw tapegrad::ValueError("a length of " + std::to_string(n) + " with " + std::to_string(left()) + " bytes left");
    return static_cast<std::size_t>(n);
  }
  template <class T>
  void get(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      unsigned char b = 0;  // any byte but 0 is true (a bool holding another value is undefined)
      take(&b, 1);
      v = b != 0;
    } else if constexpr (std::is_arithmetic_v<T>) {
      take(&v, sizeof v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      v.resize(length(1));
      take(v.data(), v.size());
    } else if constexpr (is_vector<T>::value) {
      using E = typename T::value_type;
      v.resize(length(std::is_arithmetic_v<E> ? sizeof(E) : 1));
      for (auto& x : v) get(x);
    } else {
      fields(*this, v);
    }
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

// A variant travels by its name (the records hold a pointer into the variant table).
void variant(Writer& a, const Variant*& v) { a(v->name); }
void variant(Reader& a, const Variant*& v) {
  std::string name;
  a(name);
  try {
    v = &variant_from_name(name);
  } catch (const std::exception& e) {  // std::invalid_argument, naming the placements it knows
    throw tapegrad::ValueError(e.what());
  }
}

template <class A>
void fields(A& a, Snapshot& s) {
  a(s.loss, s.grad_norm, s.rms, s.cosine, s.emb_output_grad, s.tok_emb_grad, s.total_grad);
}
template <class A>
void fields(A& a, Setup& s) {
  a(s.init, s.tied_head, s.warmup);
}
// The traces as float32 (half the bytes; their figures are read to a few digits), the lr
// trace not at all (the schedule gives it back): a record of a 400-point run is about 5 KB.
void fields(Writer& a, TrainResult& r) {
  auto narrow = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  a(narrow(r.loss), r.steps_done, r.trace_stride, r.status, r.initial_loss, r.final_loss, r.plateau, r.val_loss,
    narrow(r.grad_norm), narrow(r.norm_grad_norm), r.seconds, r.step_seconds, r.interrupted);
}
void fields(Reader& a, TrainResult& r) {
  std::vector<float> loss, grad_norm, norm_grad_norm;
  a(loss, r.steps_done, r.trace_stride, r.status, r.initial_loss, r.final_loss, r.plateau, r.val_loss, grad_norm,
    norm_grad_norm, r.seconds, r.step_seconds, r.interrupted);
  if (r.trace_stride < 1) throw tapegrad::ValueError("a trace stride of " + std::to_string(r.trace_stride));
  r.loss.assign(loss.begin(), loss.end());
  r.grad_norm.assign(grad_norm.begin(), grad_norm.end());
  r.norm_grad_norm.assign(norm_grad_norm.begin(), norm_grad_norm.end());
}
template <class A>
void fields(A& a, TranslateRecord& r) {
  a(r.placement, r.layers, r.seed, r.diverged, r.val_loss, r.exact_match, r.token_accuracy, r.seconds, r.task);
}
template <class A>
void fields(A& a, ProfileRecord& p) {
  a(p.init), variant(a, p.variant), a(p.depth, p.seed, p.at_init, p.seconds, p.task);
}
template <class A>
void fields(A& a, TrainedRecord& t) {
  a(t.stage), variant(a, t.variant);
  a(t.depth, t.steps, t.lr, t.setup, t.seed, t.train, t.outcome, t.measured_after, t.after, t.skip_losses, t.measure_seconds,
    t.task);
  if (a.version >= 5) a(t.measured_stream, t.stream_rms_init, t.stream_rms_after, t.lens);
}

}  // namespace

std::string to_bytes(const Results& r) {
  Writer a;
  a(r.profile, r.trained, r.translate);
  return std::move(a.bytes);
}

Results from_bytes(const std::string& bytes) { return from_bytes(bytes, kVersion); }

Results from_bytes(const std::string& bytes, int version) {
  Results r;
  Reader a(bytes, version);
  a(r.profile, r.trained, r.translate);
  if (a.left() != 0) throw tapegrad::ValueError(std::to_string(a.left()) + " bytes after the records");
  return r;
}

// ---------------------------------------------------------------- the files

namespace {

std::string magic(int version) { return "tapegrad depth_study record " + std::to_string(version) + "\n"; }

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

std::string record_head(const std::string& shared_key, const std::string& key) {
  return magic(kVersion) + shared_key + "\n" + key + "\n";
}

Results read_record(const std::string& bytes, const std::string& current_head) {
  // The same key under an older version's magic is the same run, read in that version's form.
  const std::string tail = current_head.substr(std::min(current_head.size(), magic(kVersion).size()));
  int version = kVersion;
  std::string head = current_head;
  while (version >= kOldestVersion && (bytes.size() < head.size() + 4 || bytes.compare(0, head.size(), head) != 0))
    head = magic(--version) + tail;
  if (version < kOldestVersion) throw tapegrad::ValueError("another run's key, or not a record");
  const std::string payload = bytes.substr(head.size() + 4);
  std::uint32_t crc = 0;
  for (int i = 0; i < 4; ++i) crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[head.size() + i])) << (8 * i);
  if (crc != tapegrad::io::crc32(payload)) throw tapegrad::ValueError("its checksum does not match");
  return from_bytes(payload, version);
}

std::string write_record(const Results& one, const std::string& head) {
  const std::string payload = to_bytes(one);
  std::string bytes = head;
  const std::uint32_t crc = tapegrad::io::crc32(payload);
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return bytes + payload;
}

std::optional<Results> RecordStore::load(const std::string& key) const {
  const std::string path = path_of(key);
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return read_record(tapegrad::io::read_file(path), record_head(shared_key_, key));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "depth_study: warning: %s is not a record of this run (%s): the run is done again\n", path.c_str(),
                 e.what());
    return std::nullopt;
  }
}

void RecordStore::save(const std::string& key, const Results& one) const {
  tapegrad::io::write_file_atomic(path_of(key), write_record(one, record_head(shared_key_, key)));
}

}  // namespace depth_study
