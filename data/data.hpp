// data.hpp — all of data/: datasets and the DataLoader, tokenizers, text corpora and token
// streams, synthetic tasks.
#pragma once

#include "bpe.hpp"
#include "byte_level.hpp"
#include "dataloader.hpp"
#include "dataset.hpp"
#include "distributed_sampler.hpp"
#include "gpt2_pretokenize.hpp"
#include "gpt2_tokenizer.hpp"
#include "mapped_file.hpp"
#include "random_split.hpp"
#include "synthetic.hpp"
#include "text_corpus.hpp"
#include "tokenizer.hpp"
