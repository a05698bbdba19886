// hf_model.cpp — load_hf_model: dispatch on config.json's model_type.
#include "hf_model.hpp"

#include "errors.hpp"
#include "hf_config.hpp"
#include "hf_gpt2.hpp"
#include "hf_llama.hpp"

namespace tapegrad::io {

std::shared_ptr<nn::TransformerLM> load_hf_model(const std::string& dir) {
  const HfConfig config = HfConfig::load(dir + "/config.json");
  const std::string type = config.string_or("model_type", "");
  if (type == "gpt2") return load_hf_gpt2(dir);
  if (type == "llama") return load_hf_llama(dir);
  throw FormatError(config.source() + ": model_type " + (type.empty() ? "is missing" : "\"" + type + "\"") +
                    "; tapegrad reads \"gpt2\" and \"llama\"");
}

}  // namespace tapegrad::io
