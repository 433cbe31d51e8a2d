// ragpp: word vectors (word2vec text and binary formats, GloVe text format) and
// WordVectorEmbedder<Analyzer>, the average of a text's word vectors.
//
// Formats:
//   word2vec text    first line "<count> <dimension>", then "<word> <v1> ... <vd>" per line
//   word2vec binary  first line "<count> <dimension>", then per word: the word's bytes,
//                    one space, d little-endian float32, and optionally a newline
//                    (Mikolov's word2vec.c writes one, some converters do not)
//   GloVe text       "<word> <v1> ... <vd>" per line, no header (Pennington et al. 2014)
// Format::automatic picks binary for a ".bin" file name, else word2vec text when the
// first line is exactly two integers, else GloVe text. The first occurrence of a repeated word is kept.
//
// WordVectorEmbedder: the text's terms come from an Analyzer (the same analysis as
// BM25 if you like); the vector is the mean of the vectors of the terms found in the
// vocabulary, each occurrence counted (as sentence-transformers' averaged GloVe
// models do), L2-normalised unless told otherwise.
// Out-of-vocabulary rule: a term absent from the vocabulary is skipped; it neither
// contributes nor counts in the mean. A text with no known term gives the zero vector
// (which a cosine VectorIndex scores 0 against everything).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/embed/embedder.hpp>

namespace ragpp {

class WordVectors {
public:
    enum class Format { automatic, word2vec_text, word2vec_binary, glove_text };

    /// Reads `path`. `max_words` > 0 keeps only the first max_words words (files are
    /// usually sorted by frequency). Throws IoError, or ParseError / FormatError naming
    /// the file and line (or byte offset) at fault.
    static WordVectors load(const std::filesystem::path& path, Format format = Format::automatic,
                            std::size_t max_words = 0) {
        const std::string bytes = detail::read_file(path);
        if (format == Format::automatic) {
            if (path.extension() == ".bin") {
                format = Format::word2vec_binary;
            } else {  // a header is a first line of exactly two integers
                std::string_view first(bytes);
                first = first.substr(0, first.find('\n'));
                const auto a = next_field(first), b = next_field(first);
                std::size_t x = 0;
                const bool header = parse_size(a, x) && parse_size(b, x) && next_field(first).find_first_not_of("\r") == std::string_view::npos;
                format = header ? Format::word2vec_text : Format::glove_text;
            }
        }
        WordVectors wv;
        wv.source_ = path.string();
        if (format == Format::word2vec_binary) wv.parse_binary(bytes, max_words);
        else wv.parse_text(bytes, format == Format::word2vec_text, max_words);
        return wv;
    }

    [[nodiscard]] std::size_t dimension() const noexcept { return static_cast<std::size_t>(vectors_.cols()); }
    [[nodiscard]] std::size_t size() const noexcept { return words_.size(); }
    [[nodiscard]] const std::vector<std::string>& words() const noexcept { return words_; }
    [[nodiscard]] const RowMatrixXf& matrix() const noexcept { return vectors_; }
    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    /// Repeated words found while loading (their later vectors were dropped).
    [[nodiscard]] std::size_t duplicates() const noexcept { return duplicates_; }

    /// The row of `word`, or -1.
    [[nodiscard]] Eigen::Index find(std::string_view word) const {
        auto it = index_.find(std::string(word));
        return it == index_.end() ? -1 : static_cast<Eigen::Index>(it->second);
    }
    [[nodiscard]] bool contains(std::string_view word) const { return find(word) >= 0; }
    /// The vector of `word`; throws NotFoundError.
    [[nodiscard]] Eigen::VectorXf vector(std::string_view word) const {
        const Eigen::Index r = find(word);
        if (r < 0) throw NotFoundError("'" + std::string(word) + "' is not in '" + source_ + "'");
        return vectors_.row(r).transpose();
    }

private:
    [[noreturn]] void fail_line(std::size_t line, const std::string& what) const {
        throw ParseError("'" + source_ + "':" + std::to_string(line) + ": " + what);
    }

    static std::string_view next_field(std::string_view& s) {
        std::size_t b = 0;
        while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
        std::size_t e = b;
        while (e < s.size() && s[e] != ' ' && s[e] != '\t') ++e;
        const std::string_view f = s.substr(b, e - b);
        s.remove_prefix(e);
        return f;
    }
    static bool parse_size(std::string_view f, std::size_t& out) {
        auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out);
        return ec == std::errc() && p == f.data() + f.size() && !f.empty();
    }

    /// How many words of dim_ values the `left` bytes after the header can hold, each
    /// taking at least value_bytes * dim_ + 2 bytes: what a reservation may ask for, so
    /// a header's count never drives an allocation beyond the file. Throws FormatError
    /// when not even one word fits (a dimension of 2000000000 in a small file).
    std::size_t words_that_fit(std::size_t value_bytes, std::size_t left, const char* kind) const {
        if (dim_ > left / value_bytes)
            throw FormatError("'" + source_ + "': the header's dimension " + std::to_string(dim_) + " does not fit in the " +
                              std::to_string(left) + " bytes after it (word2vec " + kind + " format; truncated or corrupted?)");
        return left / (value_bytes * dim_ + 2);
    }

    void add(std::string word, const float* v, std::vector<float>& data) {
        if (index_.count(word) != 0) {
            ++duplicates_;
            return;
        }
        index_.emplace(word, words_.size());
        words_.push_back(std::move(word));
        data.insert(data.end(), v, v + dim_);
    }
    void finish(std::vector<float>& data) {
        vectors_ = Eigen::Map<const RowMatrixXf>(data.data(), static_cast<Eigen::Index>(words_.size()),
                                                 static_cast<Eigen::Index>(dim_));
    }

    void parse_text(std::string_view s, bool header, std::size_t max_words) {
        std::size_t line_no = 0, declared = 0;
        std::vector<float> data, row;
        bool first = true;
        while (!s.empty() && (max_words == 0 || words_.size() < max_words)) {
            const std::size_t nl = s.find('\n');
            std::string_view line = s.substr(0, nl);
            s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
            ++line_no;
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
            if (first && header) {
                first = false;
                std::string_view rest = line;
                const auto c = next_field(rest), d = next_field(rest);
                if (!parse_size(c, declared) || !parse_size(d, dim_) || !next_field(rest).empty() || dim_ == 0)
                    fail_line(line_no, "expected the header '<count> <dimension>', got '" + std::string(line.substr(0, 60)) + "'");
                // A word's line takes at least 2 * dimension + 2 bytes ("w 1 2\n"): the
                // header is checked against the rest of the file before any allocation.
                const std::size_t fit = words_that_fit(2, s.size(), "text");
                data.reserve(std::min({declared, max_words == 0 ? declared : max_words, fit}) * dim_);
                continue;
            }
            first = false;
            std::string_view rest = line;
            const std::string_view word = next_field(rest);
            row.clear();
            for (std::string_view f = next_field(rest); !f.empty(); f = next_field(rest)) {
                float x = 0;
                auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), x);
                if (ec != std::errc() || p != f.data() + f.size() || !std::isfinite(x))
                    fail_line(line_no, "'" + std::string(f) + "' is not a finite number (word '" + std::string(word) + "')");
                row.push_back(x);
            }
            if (dim_ == 0) dim_ = row.size();  // GloVe: the first line sets the dimension
            if (row.size() != dim_ || dim_ == 0)
                fail_line(line_no, "word '" + std::string(word) + "' has " + std::to_string(row.size()) + " values, expected " +
                                       std::to_string(dim_));
            add(std::string(word), row.data(), data);
        }
        if (header && declared != words_.size() + duplicates_ && (max_words == 0 || words_.size() < max_words))
            throw FormatError("'" + source_ + "': the header declares " + std::to_string(declared) + " words, the file has " +
                              std::to_string(words_.size() + duplicates_) + " (truncated?)");
        if (words_.empty()) throw FormatError("'" + source_ + "': no word vectors");
        finish(data);
    }

    void parse_binary(std::string_view s, std::size_t max_words) {
        const std::size_t nl = s.find('\n');
        if (nl == std::string_view::npos) throw FormatError("'" + source_ + "': no header line");
        std::string_view head = s.substr(0, nl);
        if (!head.empty() && head.back() == '\r') head.remove_suffix(1);
        std::size_t declared = 0;
        const auto c = next_field(head), d = next_field(head);
        if (!parse_size(c, declared) || !parse_size(d, dim_) || dim_ == 0)
            throw FormatError("'" + source_ + "': expected the header '<count> <dimension>'");
        std::size_t pos = nl + 1;
        // A word takes at least 4 * dimension + 2 bytes (one letter, a space, the floats).
        const std::size_t fit = words_that_fit(4, s.size() - pos, "binary");
        const std::size_t want = max_words == 0 ? declared : std::min(declared, max_words);
        std::vector<float> data;
        data.reserve(std::min(want, fit) * dim_);
        std::vector<float> row(dim_);
        for (std::size_t i = 0; i < want; ++i) {
            while (pos < s.size() && (s[pos] == '\n' || s[pos] == ' ' || s[pos] == '\r')) ++pos;
            const std::size_t sp = s.find(' ', pos);
            if (sp == std::string_view::npos || sp == pos)
                throw FormatError("'" + source_ + "': truncated or malformed at byte " + std::to_string(pos) + " (word " +
                                  std::to_string(i + 1) + " of " + std::to_string(declared) + ")");
            const std::size_t vbeg = sp + 1;
            if (s.size() - vbeg < dim_ * sizeof(float))
                throw FormatError("'" + source_ + "': truncated in the vector of word " + std::to_string(i + 1) + " ('" +
                                  std::string(s.substr(pos, std::min<std::size_t>(sp - pos, 60))) + "')");
            std::memcpy(row.data(), s.data() + vbeg, dim_ * sizeof(float));
            for (float x : row)
                if (!std::isfinite(x))
                    throw FormatError("'" + source_ + "': word " + std::to_string(i + 1) + " has a non-finite value");
            add(std::string(s.substr(pos, sp - pos)), row.data(), data);
            pos = vbeg + dim_ * sizeof(float);
        }
        if (words_.empty()) throw FormatError("'" + source_ + "': no word vectors");
        finish(data);
    }

    std::string source_;
    std::size_t dim_ = 0;
    std::vector<std::string> words_;
    std::unordered_map<std::string, std::size_t> index_;
    RowMatrixXf vectors_;
    std::size_t duplicates_ = 0;
};

struct WordVectorOptions {
    /// L2-normalise the mean (cosine search does not need it; inner product does).
    bool normalize = true;
    RolePrefixes prefixes;
};

/// The mean of the word vectors of a text's terms (see the file comment for the
/// out-of-vocabulary rule). The vectors are shared: copies of the embedder are cheap.
template <Analyzer A>
class WordVectorEmbedder {
public:
    WordVectorEmbedder(std::shared_ptr<const WordVectors> vectors, A analyzer = A{}, WordVectorOptions options = {})
        : vectors_(std::move(vectors)), analyzer_(std::move(analyzer)), options_(std::move(options)) {
        if (!vectors_) throw InvalidArgument("WordVectorEmbedder: null word vectors");
    }
    WordVectorEmbedder(WordVectors vectors, A analyzer = A{}, WordVectorOptions options = {})
        : WordVectorEmbedder(std::make_shared<const WordVectors>(std::move(vectors)), std::move(analyzer), std::move(options)) {}

    [[nodiscard]] std::size_t dimension() const noexcept { return vectors_->dimension(); }
    [[nodiscard]] std::string name() const {
        return "vectors:" + std::filesystem::path(vectors_->source()).filename().string() + ";dim=" +
               std::to_string(dimension()) + ";words=" + std::to_string(vectors_->size()) + ";analyzer=" +
               std::string(analyzer_.name()) + (options_.normalize ? "" : ";raw") + options_.prefixes.describe();
    }
    [[nodiscard]] const WordVectors& vectors() const noexcept { return *vectors_; }
    [[nodiscard]] const A& analyzer() const noexcept { return analyzer_; }

    /// How many of the text's terms have a vector, and how many terms there are.
    [[nodiscard]] std::pair<std::size_t, std::size_t> coverage(std::string_view text) const {
        const auto terms = ragpp::analyze(analyzer_, text);
        std::size_t known = 0;
        for (const auto& t : terms) known += vectors_->contains(t) ? 1 : 0;
        return {known, terms.size()};
    }

    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, Role role = Role::passage) const {
        std::vector<std::string> terms;
        const std::string& prefix = options_.prefixes.of(role);
        if (prefix.empty()) analyzer_.analyze(text, terms);
        else analyzer_.analyze(options_.prefixes.apply(role, text), terms);
        Eigen::VectorXf sum = Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dimension()));
        std::size_t known = 0;
        for (const auto& t : terms) {
            const Eigen::Index r = vectors_->find(t);
            if (r < 0) continue;
            sum += vectors_->matrix().row(r).transpose();
            ++known;
        }
        if (known > 0) sum /= static_cast<float>(known);
        if (options_.normalize) {
            const float n = sum.norm();
            if (n > 0.0F) sum /= n;
        }
        return sum;
    }
    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, Role role = Role::passage) const {
        return embed_rows(*this, texts, role);
    }

private:
    std::shared_ptr<const WordVectors> vectors_;
    A analyzer_;
    WordVectorOptions options_;
};

}  // namespace ragpp
