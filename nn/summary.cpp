// summary.cpp — Module::summary and the FLOPs per token.
#include "summary.hpp"

#include <cstdio>
#include <set>
#include <sstream>

#include "attention.hpp"
#include "linear.hpp"
#include "transformer_lm.hpp"

namespace tapegrad::nn {

namespace {

// Elements of the distinct parameters of m and its descendants (a tied tensor counts once).
std::int64_t distinct_parameters(const Module& m) {
  std::set<const TensorImpl*> seen;
  std::int64_t n = 0;
  for (const auto& [_, t] : m.named_parameters())
    if (seen.insert(&t.impl()).second) n += t.numel();
  return n;
}

// label padded with spaces to `width` characters (UTF-8: the tree's lines are 3 bytes each).
std::string padded(const std::string& label, std::size_t width) {
  std::size_t characters = 0;
  for (unsigned char c : label) characters += (c & 0xC0) != 0x80;
  return label + std::string(characters < width ? width - characters : 1, ' ');
}

void add_rows(std::ostringstream& os, const Module& m, const std::string& name, const std::string& prefix,
              const std::string& child_prefix, int depth, int max_depth, double total) {
  const std::int64_t n = distinct_parameters(m);
  char row[200];
  const std::string label = prefix + (name.empty() ? "" : name + " ") + "(" + m.type_name() + ")";
  std::snprintf(row, sizeof row, "%14lld %7.1f%%\n", static_cast<long long>(n),
                total > 0 ? 100.0 * static_cast<double>(n) / total : 0.0);
  os << padded(label, 48) << row;
  if (depth >= max_depth) return;
  const auto& children = m.named_children();
  for (std::size_t i = 0; i < children.size(); ++i) {
    const bool last = i + 1 == children.size();
    add_rows(os, *children[i].second, children[i].first, child_prefix + (last ? "└─ " : "├─ "),
             child_prefix + (last ? "   " : "│  "), depth + 1, max_depth, total);
  }
}

}  // namespace

std::string short_count(double n) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (n >= 1000 && u < 5) n /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f%s" : "%.3g%s", n, units[u]);
  return text;
}

Flops flops_per_token(const Module& model, std::int64_t seq_len) {
  double forward = 0;
  auto visit = [&](const Module& m, auto& self) -> void {
    if (const auto* linear = dynamic_cast<const Linear*>(&m))
      forward += 2.0 * static_cast<double>(linear->weight.numel());
    if (const auto* attention = dynamic_cast<const MultiHeadAttention*>(&m); attention && attention->qkv) {
      const auto& o = attention->options;
      forward += 4.0 * static_cast<double>(seq_len) * static_cast<double>(o.n_heads() * o.head_dim());
    }
    if (const auto* lm = dynamic_cast<const TransformerLM*>(&m); lm && !lm->lm_head)
      forward += 2.0 * static_cast<double>(lm->config.block.d_model * lm->config.vocab_size);
    for (const auto& [_, child] : m.named_children()) self(*child, self);
  };
  visit(model, visit);
  return {forward, 2 * forward};
}

std::string Module::summary(int max_depth) const {
  const double total = static_cast<double>(distinct_parameters(*this));
  std::ostringstream os;
  char header[200];
  std::snprintf(header, sizeof header, "%-48s %14s %8s\n", "module (type)", "parameters", "share");
  os << header << std::string(72, '-') << '\n';
  add_rows(os, *this, "", "", "", 0, max_depth, total);
  os << std::string(72, '-') << '\n';
  std::int64_t trainable = 0;
  std::set<const TensorImpl*> seen;
  double bytes = 0;
  for (const auto& [_, t] : named_parameters())
    if (seen.insert(&t.impl()).second) {
      if (t.requires_grad()) trainable += t.numel();
      bytes += static_cast<double>(t.numel() * static_cast<std::int64_t>(size_of(t.dtype())));
    }
  char footer[200];
  std::snprintf(footer, sizeof footer, "parameters: %lld (%s), trainable %lld, %.2f MB\n",
                static_cast<long long>(total), short_count(total).c_str(), static_cast<long long>(trainable),
                bytes / 1e6);
  os << footer;
  return os.str();
}

}  // namespace tapegrad::nn
