// consistency.hpp — start-up checks that every rank of a job runs the same thing: the same
// tapegrad build, the same model configuration. Ranks that differ would issue different
// collectives (a layer more is a broadcast more) and hang, or train different models.
//
//   distributed::require_same(group, "tapegrad build", build_id());
//   distributed::require_same_entries(group, "model configuration", io::config_fields(model.config));
//
// Each compares with rank 0's value and, on a mismatch, throws the same ValueError on every
// rank, naming the first rank that differs and both values:
//   tapegrad build differs between ranks: rank 1 has "...", rank 0 has "..."
// Collective: every rank calls them in the same order.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "process_group.hpp"

namespace tapegrad::distributed {

void require_same(const ProcessGroup& group, const std::string& what, const std::string& value);

// The same for a list of (name, value) entries, compared as a whole; the message names the
// first entry that differs: "model configuration differs between ranks: rank 1 has n_layers
// = 2, rank 0 has n_layers = 1".
void require_same_entries(const ProcessGroup& group, const std::string& what,
                          const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace tapegrad::distributed
