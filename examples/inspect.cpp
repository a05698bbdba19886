// inspect.cpp — tapegrad-inspect FILE: what a checkpoint holds, without loading a model.
//
//   $ tapegrad-inspect train_lm.tgc
//   train_lm.tgc: training checkpoint, 3 sections, 98 metadata entries
//   step 1000
//   optimizer AdamW (2 groups)
//   schedule WarmupCosine at step 999
//   model TransformerLM (config version 1)
//     vocab_size 86, max_seq_len 64, n_layers 4, block.d_model 128, block.n_heads 4, ...
//   section model: 30 tensors, 812,544 elements
//     tok_emb.weight            float32  [86, 128]
//     ...
// Works on every file tapegrad writes (binary or JSON checkpoints, state dicts) and on
// safetensors files; a damaged file gives a clear error, never a crash.
// tapegrad-inspect --placements lists the norm placements and norms a config can name.
// tapegrad-inspect --summary FILE builds the model the file describes and prints its
// parameters by module and its FLOPs per token (nn/summary.hpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include <tapegrad/io/io.hpp>
#include <tapegrad/tapegrad.hpp>

#include "cli_checks.hpp"

using namespace tapegrad;

namespace {

std::string with_commas(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

void print_section(const std::string& name, const io::StateDict& tensors, bool all) {
  std::int64_t elements = 0;
  for (const auto& [_, t] : tensors) elements += t.numel();
  std::printf("section %s: %zu tensors, %s elements\n", name.c_str(), tensors.size(), with_commas(elements).c_str());
  std::size_t shown = 0;
  for (const auto& [key, t] : tensors) {
    if (!all && shown++ == 40) {
      std::printf("  ... %zu more (--all lists every tensor)\n", tensors.size() - 40);
      break;
    }
    std::printf("  %-44s %-8s %s\n", key.c_str(), dtype_name(t.dtype()), shape_str(t.shape()).c_str());
  }
}

// The model configuration a file stores, one "name value" pair per field, wrapped.
void print_config(const io::Checkpoint& ck, const std::string& path) {
  const std::string kind = io::model_kind(ck);
  if (kind.empty()) return;
  const auto fields = kind == "TransformerLM" ? io::config_fields(io::lm_config_from(ck, path))
                                               : io::config_fields(io::seq2seq_config_from(ck, path));
  const io::MetaValue* version = ck.find("config.version");
  std::printf("model %s (%s)\n", kind.c_str(),
              version ? ("config version " + std::to_string(std::get<std::int64_t>(*version))).c_str()
                      : "settings of an older train_lm checkpoint");
  std::string line = " ";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string item = " " + fields[i].first + " " + fields[i].second + (i + 1 < fields.size() ? "," : "");
    if (line.size() + item.size() > 100) {
      std::printf("%s\n", line.c_str());
      line = " ";
    }
    line += item;
  }
  std::printf("%s\n", line.c_str());
}

std::string meta_str(const io::MetaValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", *d);
    return buf;
  }
  return "\"" + std::get<std::string>(v) + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  bool all = false, metadata = false, placements = false, summary = false;
  int depth = 2;
  CLI::App app{"Print what a tapegrad checkpoint (or a safetensors file) holds."};
  app.add_option("FILE", path, "checkpoint, state dict or .safetensors file");
  app.add_flag("--placements", placements, "list the norm placements (with their formulas) and the norms instead");
  app.add_flag("--all", all, "list every tensor, not only the first 40 of each section");
  app.add_flag("--metadata", metadata, "print every metadata entry");
  app.add_flag("--summary", summary, "build the model the file describes: its parameters by module and FLOPs per token");
  app.add_option("--depth", depth, "with --summary: levels of modules shown")->check(cli::non_negative);
  CLI11_PARSE(app, argc, argv);
  if (placements) {
    std::printf("%sNorms:\n", nn::placement_help().c_str());
    for (const nn::NormInfo& n : nn::norm_registry()) std::printf("  %-10s%s\n", n.name.c_str(), n.formula.c_str());
    return 0;
  }
  if (path.empty()) {
    std::fprintf(stderr, "tapegrad-inspect: FILE is required (or --placements)\n");
    return 2;
  }
  try {
    if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) {
      print_section("safetensors", io::load_safetensors(path).tensors, all);
      return 0;
    }
    const io::Checkpoint ck = io::load_checkpoint(path);
    if (summary) {
      const auto model = io::model_from<nn::TransformerLM>(ck, path);
      const std::int64_t T = model->config.max_seq_len;
      const nn::Flops f = nn::flops_per_token(*model, T);
      std::printf("%s%s FLOPs per token at a context of %lld: forward %s, backward %s, a training step %s\n",
                  model->summary(depth).c_str(), path.c_str(), static_cast<long long>(T),
                  nn::short_count(f.forward).c_str(), nn::short_count(f.backward).c_str(),
                  nn::short_count(f.step()).c_str());
      return 0;
    }
    std::printf("%s: %s checkpoint, %zu sections, %zu metadata entries\n", path.c_str(), ck.kind.c_str(),
                ck.sections.size(), ck.metadata.size());
    if (ck.find("step")) std::printf("step %lld\n", static_cast<long long>(ck.get_int("step")));
    if (ck.find("optimizer.kind"))
      std::printf("optimizer %s (%lld groups)\n", ck.get_string("optimizer.kind").c_str(),
                  static_cast<long long>(ck.get_int("optimizer.groups")));
    if (ck.find("schedule.kind"))
      std::printf("schedule %s at step %lld\n", ck.get_string("schedule.kind").c_str(),
                  static_cast<long long>(ck.get_int("schedule.step")));
    print_config(ck, path);
    if (metadata)
      for (const auto& [key, value] : ck.metadata) std::printf("  %-44s %s\n", key.c_str(), meta_str(value).c_str());
    for (const auto& [name, tensors] : ck.sections) print_section(name, tensors, all);
    if (const io::StateDict* model = ck.find_section("model")) {
      std::int64_t n = 0;
      for (const auto& [_, t] : *model) n += t.numel();
      std::printf("parameters and buffers: %s\n", with_commas(n).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tapegrad-inspect: %s\n", e.what());
    return 1;
  }
  return 0;
}
