// ragpp: exceptions. Every error ragpp throws derives from ragpp::Error, carries a
// machine-readable category (Error::category(), an errc) and a message that starts with
// the category's stable id in brackets, then names the file, line, field or argument at
// fault, e.g.
//   [ragpp.invalid_argument] reciprocal_rank_fusion: weight 2 is -1 (must be >= 0)
// (the nlohmann/json style: "[json.exception.parse_error.101] ..."). An Error cannot be
// made without a category: its constructor is protected, and each subclass below fixes
// its own. docs/errors.md lists the categories, what raises each and what a caller
// should do about it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ragpp {

/// The category of a ragpp::Error. The numeric values and the ids of errc_id are
/// stable: programs may store or compare them (new categories are only appended).
enum class errc {
    invalid_argument = 1,  ///< a parameter out of its domain (InvalidArgument)
    dimension = 2,         ///< a vector of the wrong size (DimensionError, an InvalidArgument)
    duplicate_id = 3,      ///< an id already present (DuplicateError)
    not_found = 4,         ///< an unknown id, key or tensor (NotFoundError)
    parse_error = 5,       ///< malformed text: JSON, TSV, filters, front matter, UTF-8 (ParseError)
    format_error = 6,      ///< a file of the wrong format, version or content (FormatError)
    io_error = 7,          ///< a file that cannot be opened, read, written or renamed (IoError)
    unsupported = 8,       ///< a feature of an input ragpp does not implement (UnsupportedError)
    out_of_memory = 9,     ///< memory ran out while reading or indexing a named input (OutOfMemoryError)
};

/// The stable id of a category, as it appears in messages ("[ragpp.<id>] ...").
[[nodiscard]] constexpr std::string_view errc_id(errc c) noexcept {
    switch (c) {
        case errc::invalid_argument: return "invalid_argument";
        case errc::dimension: return "dimension";
        case errc::duplicate_id: return "duplicate_id";
        case errc::not_found: return "not_found";
        case errc::parse_error: return "parse_error";
        case errc::format_error: return "format_error";
        case errc::io_error: return "io_error";
        case errc::unsupported: return "unsupported";
        case errc::out_of_memory: return "out_of_memory";
    }
    return "unknown";
}

/// Base of every exception thrown by ragpp. Catch it to handle any ragpp failure;
/// switch on category() to handle some of them.
class Error : public std::runtime_error {
public:
    /// The machine-readable category.
    [[nodiscard]] errc category() const noexcept { return category_; }
    /// The category's stable id ("parse_error", ...), as in the message's "[ragpp.<id>]".
    [[nodiscard]] std::string_view id() const noexcept { return errc_id(category_); }

protected:
    Error(errc category, const std::string& message)
        : std::runtime_error("[ragpp." + std::string(errc_id(category)) + "] " + message), category_(category) {}

private:
    errc category_;
};

/// A parameter is out of its domain (negative k, NaN weight, k1 < 0, ...), or an
/// argument does not fit the data it is used with (an index loaded with another
/// analyzer or embedder than the one it was built with).
class InvalidArgument : public Error {
public:
    explicit InvalidArgument(const std::string& m) : Error(errc::invalid_argument, m) {}

protected:
    InvalidArgument(errc category, const std::string& m) : Error(category, m) {}
};

/// A vector or matrix has the wrong number of dimensions.
class DimensionError : public InvalidArgument {
public:
    explicit DimensionError(const std::string& m) : InvalidArgument(errc::dimension, m) {}
};

/// An id is already present (document key, DocId).
class DuplicateError : public Error {
public:
    explicit DuplicateError(const std::string& m) : Error(errc::duplicate_id, m) {}
};

/// An id is unknown (removing a document that is not there, a tensor a file lacks, ...).
class NotFoundError : public Error {
public:
    explicit NotFoundError(const std::string& m) : Error(errc::not_found, m) {}
};

/// Malformed input text: UTF-8 in strict mode, JSON, TSV, question sets, filter
/// expressions, front matter, input nested deeper than ragpp's parsers allow.
/// The message names the file (or "<input>"), the line and the field where known.
class ParseError : public Error {
public:
    explicit ParseError(const std::string& m) : Error(errc::parse_error, m) {}
};

/// A file (saved index, safetensors, word vectors, tokenizer.json, config.json) is
/// truncated, corrupted, of another format or version, or holds values that do not fit
/// (a size larger than the file, an id beyond the vocabulary, a non-finite weight).
class FormatError : public Error {
public:
    explicit FormatError(const std::string& m) : Error(errc::format_error, m) {}
};

/// A file or folder cannot be found, opened, read, written or renamed.
class IoError : public Error {
public:
    explicit IoError(const std::string& m) : Error(errc::io_error, m) {}
};

/// Memory ran out (std::bad_alloc) while an input was read or indexed: the message names
/// it (the file, its size), and what was being built was taken back. Thrown where ragpp
/// knows which input it was working on; elsewhere std::bad_alloc goes through as is.
class OutOfMemoryError : public Error {
public:
    explicit OutOfMemoryError(const std::string& m) : Error(errc::out_of_memory, m) {}
};

/// A feature of an input (a tokenizer normalizer, a dtype, ...) that ragpp does not
/// implement: said clearly instead of computing a silently wrong result.
class UnsupportedError : public Error {
public:
    explicit UnsupportedError(const std::string& m) : Error(errc::unsupported, m) {}
};

}  // namespace ragpp
