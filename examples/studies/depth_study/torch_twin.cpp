// torch_twin.cpp — the export for depth_study_torch.py, running it, reading its results.
#include "torch_twin.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include <tapegrad/io/json.hpp>

namespace depth_study {

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------- writing the export

// Raw little-endian values, as torch.frombuffer reads them (every machine this builds on is
// little-endian; the script says so if one is not).
template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}

// The shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
std::string exact(double v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;
  return {text, end};
}

template <typename T, typename Show>
std::string json_list(const std::vector<T>& items, Show show) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + show(items[i]);
  return out + "]";
}

void validate(const Data& data, const TorchSetup& s) {
  auto fail = [](const std::string& what) { throw ValueError("export_for_torch: " + what); };
  if (s.d_model <= 0 || s.heads <= 0 || s.d_model % s.heads != 0) fail("heads must divide d_model");
  if (s.seq_len <= 0 || s.batch <= 0 || s.steps <= 0 || s.warmup < 0) fail("seq_len, batch and steps must be positive");
  const std::vector<std::string> known = {"none", "post", "pre", "b2t"};
  for (const std::string& p : s.placements)
    if (std::find(known.begin(), known.end(), p) == known.end())
      fail("placement '" + p + "' has no PyTorch twin (expected none, post, pre or b2t)");
  const std::vector<std::string> inits = {"gpt2", "gpt2-unscaled", "pytorch", "xavier"};
  if (std::find(inits.begin(), inits.end(), s.init) == inits.end()) fail("unknown init '" + s.init + "'");
  const std::vector<std::string>& schedules = training::schedule_names();
  if (std::find(schedules.begin(), schedules.end(), s.schedule) == schedules.end())
    fail("unknown schedule '" + s.schedule + "'");
  if (s.placements.empty() || s.depths.empty() || s.seeds.empty()) fail("no runs: placements, depths and seeds must not be empty");
  if (!data.stream || data.validation.empty()) fail("the data has no token stream or no validation batches");
  for (const data::Batch& b : data.validation)
    if (b.inputs.size(1) != s.seq_len)
      fail("the validation windows are " + std::to_string(b.inputs.size(1)) + " tokens long, the setup's seq_len is " +
           std::to_string(s.seq_len));
}

std::string batch_starts_file(std::uint64_t seed) { return "batch_starts_seed" + std::to_string(seed) + ".i64"; }

// ---------------------------------------------------------------- running the script

// s in single quotes for sh (a ' inside becomes '\'').
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Command {
  int status = -1;        // the exit status; -1 when it did not exit normally
  std::string output;     // stdout and stderr together, unless echoed
  std::deque<std::string> tail;  // the last lines
};

// Runs `command` through sh with stderr joined to stdout; echo: print each line as it comes.
Command run_command(const std::string& command, bool echo) {
  Command c;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return c;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    if (echo) {
      std::fputs(line, stdout);
      std::fflush(stdout);
    } else {
      c.output += line;
    }
    c.tail.emplace_back(line);
    if (c.tail.size() > 20) c.tail.pop_front();
  }
  const int raw = ::pclose(pipe);
  c.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return c;
}

// The version torch reports under `python`, or "" when it cannot be imported there.
std::string torch_version(const std::string& python) {
  const Command c = run_command(shell_quote(python) + " -c 'import torch; print(torch.__version__)'", false);
  if (c.status != 0 || c.tail.empty()) return "";
  std::string v = c.tail.back();
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

// ---------------------------------------------------------------- reading the results

// The script writes no quoted cells (names and statuses have no commas).
std::vector<std::vector<std::string>> csv_rows(const std::string& path, const std::string& header) {
  std::stringstream in(io::read_file(path));
  std::string line;
  if (!std::getline(in, line) || line != header)
    throw std::runtime_error(path + ": expected the header " + header + ", got " + line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells(1);
    for (char ch : line) {
      if (ch == ',') cells.emplace_back();
      else cells.back().push_back(ch);
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::string run_key(const std::vector<std::string>& row) { return row[0] + "," + row[1] + "," + row[2] + "," + row[3]; }

std::vector<TorchRun> read_results(const std::string& dir) {
  const auto results = csv_rows(dir + "/torch_results.csv",
                                "placement,depth,lr,seed,status,initial_loss,final_loss,val_loss,seconds");
  const auto losses = csv_rows(dir + "/torch_losses.csv", "placement,depth,lr,seed,step,loss");
  std::map<std::string, std::vector<double>> curves;  // run_key -> losses, in step order
  for (const auto& row : losses) {
    if (row.size() != 6) throw std::runtime_error(dir + "/torch_losses.csv: a row without 6 cells");
    curves[run_key(row)].push_back(std::stod(row[5]));
  }
  std::vector<TorchRun> runs;
  for (const auto& row : results) {
    if (row.size() != 9) throw std::runtime_error(dir + "/torch_results.csv: a row without 9 cells");
    TorchRun r;
    r.placement = row[0];
    r.depth = std::stoll(row[1]);
    r.lr = std::stod(row[2]);
    r.seed = std::stoull(row[3]);
    r.status = row[4];
    r.initial_loss = std::stod(row[5]);  // std::stod reads the script's "nan" too
    r.final_loss = std::stod(row[6]);
    r.val_loss = std::stod(row[7]);
    r.seconds = std::stod(row[8]);
    r.shared_init = fs::exists(initial_weights_path(dir, r.placement, r.depth, r.seed));
    r.loss = curves[run_key(row)];
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace

void export_for_torch(const std::string& dir, const Data& data, const TorchSetup& s) {
  validate(data, s);
  fs::create_directories(dir);
  const auto train = data.stream->tokens(data::Split::train);
  io::write_file_atomic(dir + "/train_tokens.i32", raw_bytes(std::vector<data::TokenId>(train.begin(), train.end())));

  std::vector<std::int64_t> inputs, targets, batch_sizes;
  for (const data::Batch& b : data.validation) {
    for (std::int64_t v : b.inputs.to_vector<std::int64_t>()) inputs.push_back(v);
    for (std::int64_t v : b.targets.to_vector<std::int64_t>()) targets.push_back(v);
    batch_sizes.push_back(b.inputs.size(0));
  }
  io::write_file_atomic(dir + "/validation_inputs.i64", raw_bytes(inputs));
  io::write_file_atomic(dir + "/validation_targets.i64", raw_bytes(targets));

  // The batches of train(): the model seeded with s draws them from Generator(s ^ 0x5eedULL).
  for (std::uint64_t seed : s.seeds) {
    Generator batches(seed ^ 0x5eedULL);
    std::vector<std::int64_t> starts;
    for (std::int64_t step = 0; step < s.steps; ++step) {
      const data::Batch b = data.stream->sample_batch(data::Split::train, s.batch, s.seq_len, batches);
      starts.insert(starts.end(), b.indices.begin(), b.indices.end());
    }
    io::write_file_atomic(dir + "/" + batch_starts_file(seed), raw_bytes(starts));
  }

  const auto quoted = [](const std::string& v) { return io::json::quote(v); };
  const auto integer = [](auto v) { return std::to_string(v); };
  const std::vector<double> lrs = s.lrs.empty() ? std::vector<double>{s.lr_default} : s.lrs;
  std::string seed_files = "{";
  for (std::size_t i = 0; i < s.seeds.size(); ++i)
    seed_files += (i ? ", " : "") + io::json::quote(std::to_string(s.seeds[i])) + ": " + quoted(batch_starts_file(s.seeds[i]));
  const std::string json =
      "{\n"
      "  \"format\": \"depth_study torch export 1\",\n"
      "  \"vocab_size\": " + integer(data.vocab_size) + ",\n"
      "  \"d_model\": " + integer(s.d_model) + ", \"heads\": " + integer(s.heads) + ", \"seq_len\": " + integer(s.seq_len) +
      ", \"batch\": " + integer(s.batch) + ",\n"
      "  \"steps\": " + integer(s.steps) + ", \"warmup\": " + integer(s.warmup) + ", \"schedule\": " + quoted(s.schedule) +
      ", \"min_lr_ratio\": " + exact(s.min_lr_ratio) + ",\n"
      "  \"weight_decay\": " + exact(s.weight_decay) + ", \"clip\": " + exact(s.clip) + ", \"beta1\": " + exact(s.beta1) +
      ", \"beta2\": " + exact(s.beta2) + ",\n"
      "  \"init\": " + quoted(s.init) + ", \"tie_head\": " + (s.tie_head ? "true" : "false") + ",\n"
      "  \"placements\": " + json_list(s.placements, quoted) + ",\n"
      "  \"depths\": " + json_list(s.depths, integer) + ",\n"
      "  \"lrs\": " + json_list(lrs, exact) + ",\n"
      "  \"seeds\": " + json_list(s.seeds, integer) + ",\n"
      "  \"train_tokens\": \"train_tokens.i32\",\n"
      "  \"validation\": {\"inputs\": \"validation_inputs.i64\", \"targets\": \"validation_targets.i64\", \"batch_sizes\": " +
      json_list(batch_sizes, integer) + "},\n"
      "  \"batch_starts\": " + seed_files + "}\n"
      "}\n";
  io::write_file_atomic(dir + "/setup.json", json);
}

std::string initial_weights_path(const std::string& dir, const std::string& placement, std::int64_t depth,
                                 std::uint64_t seed) {
  return dir + "/init_" + placement + "_L" + std::to_string(depth) + "_seed" + std::to_string(seed) + ".safetensors";
}

void export_initial_weights(const std::string& dir, const nn::Module& model, const std::string& placement,
                            std::int64_t depth, std::uint64_t seed) {
  fs::create_directories(dir);
  io::save_safetensors(io::state_dict(model), initial_weights_path(dir, placement, depth, seed));
}

TorchOutcome run_torch(const std::string& dir, const std::string& python, std::int64_t threads) {
  TorchOutcome out;
  const std::vector<std::string> candidates =
      python.empty() ? std::vector<std::string>{"python3", "/usr/bin/python3"} : std::vector<std::string>{python};
  for (const std::string& candidate : candidates) {
    out.torch_version = torch_version(candidate);
    if (!out.torch_version.empty()) {
      out.python = candidate;
      break;
    }
  }
  if (out.python.empty()) {
    out.skipped = (python.empty() ? "neither python3 nor /usr/bin/python3 can" : python + " cannot") +
                  " import torch: apt-get install python3-torch";
    return out;
  }
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  const fs::path script = exe.parent_path() / "depth_study_torch.py";
  if (error || !fs::exists(script)) {
    out.skipped = "the script " + script.string() + " is missing (it is copied beside the executable at build time)";
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  const Command c = run_command(shell_quote(out.python) + " " + shell_quote(script.string()) + " " + shell_quote(dir) +
                                    " --threads " + std::to_string(threads),
                                true);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.threads = threads;
  if (c.status != 0) {
    std::string tail;
    for (const std::string& line : c.tail) tail += line;
    throw std::runtime_error(script.string() + " failed (exit status " + std::to_string(c.status) + "); its last lines:\n" + tail);
  }
  out.runs = read_results(dir);
  return out;
}

}  // namespace depth_study
