// tokenizer.cpp — the character-level tokenizer, the shared tokenizer file reader, and
// load_tokenizer.
#include "tokenizer.hpp"

#include <charconv>

#include "../io/errors.hpp"
#include "../io/file.hpp"
#include "bpe.hpp"
#include "gpt2_tokenizer.hpp"
#include "tokenizer_file.hpp"

namespace tapegrad::data {

// ---------------------------------------------------------------- Tokenizer helpers

Tensor Tokenizer::encode_tensor(std::string_view text) const {
  const std::vector<TokenId> ids = encode(text);
  Tensor out = Tensor::empty({1, static_cast<std::int64_t>(ids.size())}, DType::int64);
  std::int64_t* p = out.data<std::int64_t>();
  for (std::size_t i = 0; i < ids.size(); ++i) p[i] = ids[i];
  return out;
}

std::string Tokenizer::decode_tensor(const Tensor& ids) const {
  if (ids.dtype() != DType::int64)
    throw DTypeError(name() + " tokenizer: decode_tensor expects int64 ids, got " +
                     dtype_name(ids.dtype()));
  std::vector<TokenId> values;
  values.reserve(static_cast<std::size_t>(ids.numel()));
  for (std::int64_t id : ids.to_vector<std::int64_t>()) {
    if (id < 0 || id >= vocab_size())
      throw ValueError(name() + " tokenizer: decode_tensor: id " + std::to_string(id) +
                       " is outside the vocabulary [0, " + std::to_string(vocab_size()) + ")");
    values.push_back(static_cast<TokenId>(id));
  }
  return decode(values);
}

// ---------------------------------------------------------------- CharTokenizer

CharTokenizer::CharTokenizer(std::vector<unsigned char> bytes) : bytes_(std::move(bytes)) {
  if (bytes_.empty()) throw ValueError("CharTokenizer: the vocabulary is empty");
  id_of_.fill(-1);
  for (std::size_t i = 0; i < bytes_.size(); ++i) {
    if (i > 0 && bytes_[i] <= bytes_[i - 1])
      throw ValueError("CharTokenizer: vocabulary bytes must be strictly increasing (byte " +
                       std::to_string(bytes_[i]) + " at id " + std::to_string(i) + ")");
    id_of_[bytes_[i]] = static_cast<TokenId>(i);
  }
}

CharTokenizer CharTokenizer::from_texts(std::span<const std::string_view> texts) {
  std::array<bool, 256> seen{};
  for (std::string_view text : texts)
    for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::vector<unsigned char> bytes;
  for (int b = 0; b < 256; ++b)
    if (seen[b]) bytes.push_back(static_cast<unsigned char>(b));
  if (bytes.empty()) throw ValueError("CharTokenizer::from_text: the text is empty");
  return CharTokenizer(std::move(bytes));
}

CharTokenizer CharTokenizer::from_text(std::string_view text) {
  return from_texts(std::span<const std::string_view>(&text, 1));
}

CharTokenizer CharTokenizer::all_bytes() {
  std::vector<unsigned char> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = static_cast<unsigned char>(b);
  return CharTokenizer(std::move(bytes));
}

std::vector<TokenId> CharTokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    ids[i] = id_of_[byte];
    if (ids[i] < 0)
      throw ValueError("CharTokenizer.encode: byte " + std::to_string(byte) + " at offset " +
                       std::to_string(i) +
                       " is not in the vocabulary (it did not occur in the training text)");
  }
  return ids;
}

std::string CharTokenizer::decode(std::span<const TokenId> ids) const {
  std::string text(ids.size(), '\0');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size())
      throw ValueError("CharTokenizer.decode: id " + std::to_string(ids[i]) + " at position " +
                       std::to_string(i) + " is outside the vocabulary [0, " +
                       std::to_string(vocab_size()) + ")");
    text[i] = static_cast<char>(bytes_[static_cast<std::size_t>(ids[i])]);
  }
  return text;
}

// Format: header, "vocab_size N", then N lines each holding one byte value (decimal).
void CharTokenizer::save(const std::string& path) const {
  std::string out = detail::tokenizer_file_header("char");
  out += "vocab_size " + std::to_string(bytes_.size()) + "\n";
  for (unsigned char b : bytes_) out += std::to_string(b) + "\n";
  out += "end\n";
  io::write_file_atomic(path, out);
}

CharTokenizer detail::read_char_body(TokenizerFileReader& reader) {
  const std::int64_t n = reader.keyed_int("vocab_size", 1, 256);
  std::vector<unsigned char> bytes;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto byte = reader.to_int(reader.fields(1)[0], 0, 255);
    if (!bytes.empty() && byte <= bytes.back())
      reader.fail("byte values must be strictly increasing, got " + std::to_string(byte) +
                  " after " + std::to_string(bytes.back()));
    bytes.push_back(static_cast<unsigned char>(byte));
  }
  reader.expect_end();
  return CharTokenizer(std::move(bytes));
}

CharTokenizer CharTokenizer::load(const std::string& path) {
  detail::TokenizerFileReader reader(path);
  const std::string type = reader.read_type();
  if (type != "char")
    reader.fail("this is a '" + type + "' tokenizer, not a char tokenizer (use load_tokenizer)");
  return detail::read_char_body(reader);
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  detail::TokenizerFileReader reader(path);
  return detail::read_tokenizer(reader);
}

std::unique_ptr<Tokenizer> detail::read_tokenizer(TokenizerFileReader& reader) {
  const std::string type = reader.read_type();
  if (type == "char") return std::make_unique<CharTokenizer>(detail::read_char_body(reader));
  if (type == "bpe") return std::make_unique<BpeTokenizer>(detail::read_bpe_body(reader));
  if (type == "gpt2") return std::make_unique<Gpt2Tokenizer>(detail::read_gpt2_body(reader));
  reader.fail("unknown tokenizer type '" + type + "' (expected char, bpe or gpt2)");
}

// ---------------------------------------------------------------- the file reader

namespace detail {

namespace {
// A piece of a damaged line, safe to print: at most 40 bytes, non-printable bytes as '?'.
std::string printable(std::string_view text) {
  std::string out(text.substr(0, 40));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return out;
}
}  // namespace

std::string tokenizer_file_header(std::string_view type) {
  return std::string(kTokenizerMagic) + " " + std::to_string(kTokenizerFormatVersion) + "\ntype " +
         std::string(type) + "\n";
}

TokenizerFileReader::TokenizerFileReader(const std::string& path)
    : text_(io::read_file(path)), source_(path) {
  check_header();
}

TokenizerFileReader::TokenizerFileReader(std::string text, const std::string& source)
    : text_(std::move(text)), source_(source) {
  check_header();
}

void TokenizerFileReader::fail(const std::string& what) const {
  throw io::FormatError("tokenizer file '" + source_ + "', line " + std::to_string(line_) + ": " +
                        what);
}

std::vector<std::string_view> TokenizerFileReader::next_line() {
  if (pos_ >= text_.size()) {
    ++line_;
    fail("unexpected end of file (the file is truncated)");
  }
  std::size_t end = text_.find('\n', pos_);
  if (end == std::string::npos) end = text_.size();
  const std::string_view line(text_.data() + pos_, end - pos_);
  pos_ = end + 1;
  ++line_;
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t space = line.find(' ', start);
    out.push_back(line.substr(start, space == std::string_view::npos ? space : space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return out;
}

std::vector<std::string_view> TokenizerFileReader::fields(std::size_t expected_count) {
  std::vector<std::string_view> out = next_line();
  if (out.size() != expected_count) {
    std::string line;
    for (std::size_t i = 0; i < out.size(); ++i) line += (i ? " " : "") + std::string(out[i]);
    fail("expected " + std::to_string(expected_count) + " field(s) separated by one space, got '" +
         printable(line) + "'");
  }
  return out;
}

std::int64_t TokenizerFileReader::to_int(std::string_view field, std::int64_t lo,
                                         std::int64_t hi) const {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || ptr != field.data() + field.size() || field.empty())
    fail("'" + printable(field) + "' is not an integer");
  if (value < lo || value > hi)
    fail("value " + std::to_string(value) + " is outside [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  return value;
}

std::int64_t TokenizerFileReader::keyed_int(std::string_view key, std::int64_t lo, std::int64_t hi) {
  const auto f = fields(2);
  if (f[0] != key) fail("expected '" + std::string(key) + " <n>', got '" + printable(f[0]) + "'");
  return to_int(f[1], lo, hi);
}

void TokenizerFileReader::check_header() {
  const auto f = next_line();
  if (f.size() != 2 || f[0] != kTokenizerMagic)
    fail("not a tapegrad tokenizer file (it should start with '" + std::string(kTokenizerMagic) +
         " <version>')");
  const std::int64_t version = to_int(f[1], 0, INT64_MAX);
  if (version < 1 || version > kTokenizerFormatVersion)
    fail("format version " + std::to_string(version) + " is not supported (this build reads 1 to " +
         std::to_string(kTokenizerFormatVersion) + ")");
}

std::string TokenizerFileReader::read_type() {
  const auto f = fields(2);
  if (f[0] != "type") fail("expected 'type <name>', got '" + printable(f[0]) + "'");
  return printable(f[1]);  // a valid type is printable anyway
}

void TokenizerFileReader::expect_end() {
  const auto f = fields(1);
  if (f[0] != "end") fail("expected 'end', got '" + printable(f[0]) + "'");
  if (pos_ < text_.size()) {
    ++line_;
    fail("unexpected data after 'end'");
  }
}

}  // namespace detail

}  // namespace tapegrad::data
