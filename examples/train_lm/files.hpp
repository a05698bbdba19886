// files.hpp — where train_lm keeps what belongs with a checkpoint: the tokenizer is saved
// beside it (run.tgc -> run.tgc.tokenizer). sample reads both.
#pragma once

#include <string>

namespace lm {

inline std::string tokenizer_path(const std::string& checkpoint) { return checkpoint + ".tokenizer"; }

}  // namespace lm
