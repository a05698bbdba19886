#!/usr/bin/env python3
"""Writes tests/reference/gpt2_bpe/{vocab.json, merges.txt, expected.json}: a small GPT-2-style
byte-level BPE vocabulary learned here, and what GPT-2's reference algorithm makes of a test
corpus with it. tests/data/test_gpt2_tokenizer.cpp reads the three files and needs no Python.

Regenerate (from the repository root, with Debian's python3-regex, the `regex` module GPT-2
uses for its \\p{L} and \\p{N} classes):

    /usr/bin/python3 tests/reference/make_gpt2_bpe_reference.py

and commit the three files with this script.

The encoder below is GPT-2's src/encoder.py (Radford et al. 2019, github.com/openai/gpt-2),
bytes_to_unicode, get_pairs, bpe, encode and decode, kept as close to the original as
possible. The merges are learned here by the usual BPE training loop on TRAIN (count
adjacent pairs over the pre-tokenized words, merge the most frequent, ties to the smallest
pair) so that the files have GPT-2's layout: the 256 byte tokens first (ids 0..255 in
bytes_to_unicode order, as GPT-2's own vocab.json), one token per merge, "<|endoftext|>"
last, and merges.txt with its "#version: 0.2" line. vocab.json is written with sorted keys,
so that the file order is not the id order.

expected.json: {"cases": [{"text": str, "pieces": [str], "ids": [int]}, ...]}: for every
string of TEST (TRAIN's strings and others the merges never saw), GPT-2's regex pieces and
encode() ids.
"""

import collections
import json
import os

import regex as re

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gpt2_bpe")
NUM_MERGES = 200

# ---------------------------------------------------------------- GPT-2's encoder.py


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    cs = [chr(n) for n in cs]
    return dict(zip(bs, cs))


def get_pairs(word):
    pairs = set()
    prev_char = word[0]
    for char in word[1:]:
        pairs.add((prev_char, char))
        prev_char = char
    return pairs


PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


class Encoder:
    def __init__(self, encoder, bpe_merges):
        self.encoder = encoder
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {v: k for k, v in self.byte_encoder.items()}
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.pat = PATTERN

    def bpe(self, token):
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return token
        while True:
            bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float("inf")))
            if bigram not in self.bpe_ranks:
                break
            first, second = bigram
            new_word = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                    new_word.extend(word[i:j])
                    i = j
                except ValueError:
                    new_word.extend(word[i:])
                    break
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = get_pairs(word)
        return " ".join(word)

    def encode(self, text):
        bpe_tokens = []
        for token in re.findall(self.pat, text):
            token = "".join(self.byte_encoder[b] for b in token.encode("utf-8"))
            bpe_tokens.extend(self.encoder[bpe_token] for bpe_token in self.bpe(token).split(" "))
        return bpe_tokens

    def decode(self, tokens):
        text = "".join([self.decoder[token] for token in tokens])
        return bytearray([self.byte_decoder[c] for c in text]).decode("utf-8", errors="replace")


# ---------------------------------------------------------------- the corpus

TRAIN = [
    "The quick brown fox jumps over the lazy dog. The dog didn't care; it's lazy.",
    "We're here, they've gone, I'm tired and you'll see what he'd say.",
    "Café au lait, crème brûlée, naïve façade, jalapeño, Ångström, Straße.",
    "Привет, мир! Как дела? Москва — столица России.",
    "東京は日本の首都です。漢字と仮名を混ぜて書きます。",
    "Emoji: 😀 😃 🎉 👍🏽 ❤️ and more 🎉🎉 party.",
    "Numbers: 1234567890, 3.14159, 2026-12-01, 42 and 7.",
    "Spaces:  two   three    four\nnew line\n\nblank line\n\n\nthree newlines\ttab",
    "the the the then there these those this that thing thinking",
]

TEST = TRAIN + [
    "Hello world",
    "",
    " ",
    "   leading and trailing   ",
    "\n\n",
    "Ελληνικά: Γειά σου Κόσμε",
    "العربية: مرحبا بالعالم ٣٤٥",
    "हिन्दी: नमस्ते दुनिया",
    "한국어 안녕하세요 세계",
    "Flags 🇫🇷🇯🇵, family 👨‍👩‍👧‍👦, keycap 1️⃣.",
    "Mixed: abc123def ½ ¾ Ⅻ ①",
    "Contractions at the start: 's 't 're 've 'm 'll 'd and 'S 'LL",
    "Punctuation!!! ??? ... --- (brackets) [more] {curly} <angle>",
    "Tabs\tand\r\nwindows\r\nline endings",
    "Non-breaking\u00a0space and\u2003em space and\u3000ideographic space",
    "zero\u200bwidth and soft\u00adhyphen",
    # Unicode's White_Space and not: which of these \\s matches (PCRE2's \\s differs on U+180E).
    "x" + "".join(chr(c) * 2 + "y" for c in [0x9, 0xB, 0xC, 0x1C, 0x1F, 0x85, 0xA0, 0x1680, 0x180E,
                                            0x2000, 0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0xFEFF, 0x3000]),
    "Ünïcödé mixed with ASCII and 数字123",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "the lazy dog's café in Москва had 1234567890 visitors 😀",
]

# ---------------------------------------------------------------- learning the merges


def learn_merges(texts, num_merges):
    byte_encoder = bytes_to_unicode()
    words = collections.Counter()
    for text in texts:
        for piece in re.findall(PATTERN, text):
            words[tuple(byte_encoder[b] for b in piece.encode("utf-8"))] += 1
    merges = []
    for _ in range(num_merges):
        counts = collections.Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += n
        if not counts:
            break
        best = min(counts, key=lambda pair: (-counts[pair], pair))
        merges.append(best)
        merged = collections.Counter()
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return merges


def main():
    os.makedirs(OUT, exist_ok=True)
    merges = learn_merges(TRAIN, NUM_MERGES)
    vocab = {}
    for c in bytes_to_unicode().values():
        vocab[c] = len(vocab)
    for first, second in merges:
        vocab.setdefault(first + second, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)

    with open(os.path.join(OUT, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, sort_keys=True)  # \u escapes, as GPT-2's own vocab.json
    with open(os.path.join(OUT, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for first, second in merges:
            f.write(first + " " + second + "\n")

    enc = Encoder(vocab, merges)
    cases = []
    for text in TEST:
        ids = enc.encode(text)
        assert enc.decode(ids) == text
        cases.append({"text": text, "pieces": re.findall(PATTERN, text), "ids": ids})
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/reference/make_gpt2_bpe_reference.py", "cases": cases},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: {len(vocab)} tokens, {len(merges)} merges, {len(cases)} cases")


if __name__ == "__main__":
    main()
