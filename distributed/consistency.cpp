// consistency.cpp — rank 0's value to every rank, the first rank that differs back to all.
#include "consistency.hpp"

#include <cstdint>
#include <optional>

#include "../autograd/errors.hpp"

namespace tapegrad::distributed {

namespace {

// `text` of rank `root`, on every rank (its length first, then its bytes).
std::string broadcast_text(const ProcessGroup& group, const std::string& text, int root) {
  std::uint64_t length = text.size();
  group.broadcast(&length, sizeof length, root);
  std::string out = group.rank() == root ? text : std::string(length, '\0');
  group.broadcast(out.data(), static_cast<std::int64_t>(length), root);
  return out;
}

struct Mismatch {
  int rank = 0;
  std::string theirs, rank0s;
};

// The lowest rank whose value differs from rank 0's, with both values, on every rank.
std::optional<Mismatch> first_mismatch(const ProcessGroup& group, const std::string& value) {
  if (group.world_size() == 1) return std::nullopt;
  const std::string rank0s = broadcast_text(group, value, 0);
  const std::uint64_t none = static_cast<std::uint64_t>(group.world_size());
  const std::uint64_t first = group.min(value == rank0s ? none : static_cast<std::uint64_t>(group.rank()));
  if (first == none) return std::nullopt;
  const int rank = static_cast<int>(first);
  return Mismatch{rank, broadcast_text(group, value, rank), rank0s};
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

void require_same(const ProcessGroup& group, const std::string& what, const std::string& value) {
  if (const auto m = first_mismatch(group, value))
    throw ValueError(what + " differs between ranks: rank " + std::to_string(m->rank) + " has " + quoted(m->theirs) +
                     ", rank 0 has " + quoted(m->rank0s));
}

void require_same_entries(const ProcessGroup& group, const std::string& what,
                          const std::vector<std::pair<std::string, std::string>>& entries) {
  // One line per entry: "name = value\n". Names and values hold no newline.
  std::string text;
  for (const auto& [name, value] : entries) text += name + " = " + value + "\n";
  const auto m = first_mismatch(group, text);
  if (!m) return;
  // The first line where the two differ (or the first missing one).
  auto line_at = [](const std::string& s, std::size_t start) {
    const std::size_t end = s.find('\n', start);
    return start >= s.size() ? std::string("(nothing)") : s.substr(start, end - start);
  };
  std::size_t start = 0;
  while (start < m->theirs.size() && start < m->rank0s.size() && line_at(m->theirs, start) == line_at(m->rank0s, start))
    start = m->theirs.find('\n', start) + 1;
  throw ValueError(what + " differs between ranks: rank " + std::to_string(m->rank) + " has " + line_at(m->theirs, start) +
                   ", rank 0 has " + line_at(m->rank0s, start));
}

}  // namespace tapegrad::distributed
