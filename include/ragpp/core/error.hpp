// ragpp: exceptions. Every error ragpp throws derives from ragpp::Error and its
// message starts with a bracketed category, then names the file, line, field or
// argument at fault, e.g.
//   [ragpp.invalid_argument] reciprocal_rank_fusion: weight 2 is -1 (must be >= 0)
#pragma once

#include <stdexcept>
#include <string>

namespace ragpp {

/// Base of every exception thrown by ragpp.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}

protected:
    Error(const char* category, const std::string& message)
        : std::runtime_error(std::string("[ragpp.") + category + "] " + message) {}
};

/// A parameter is out of its domain (negative k, NaN weight, k1 < 0, ...).
class InvalidArgument : public Error {
public:
    explicit InvalidArgument(const std::string& m) : Error("invalid_argument", m) {}

protected:
    InvalidArgument(const char* category, const std::string& m) : Error(category, m) {}
};

/// A vector or matrix has the wrong number of dimensions.
class DimensionError : public InvalidArgument {
public:
    explicit DimensionError(const std::string& m) : InvalidArgument("dimension", m) {}
};

/// An id is already present (document key, DocId).
class DuplicateError : public Error {
public:
    explicit DuplicateError(const std::string& m) : Error("duplicate_id", m) {}
};

/// An id is unknown (removing a document that is not there, ...).
class NotFoundError : public Error {
public:
    explicit NotFoundError(const std::string& m) : Error("not_found", m) {}
};

/// Malformed input text: UTF-8 in strict mode, JSON, TSV, question sets, model files.
/// The message names the file (or "<input>"), the line and the field where known.
class ParseError : public Error {
public:
    explicit ParseError(const std::string& m) : Error("parse_error", m) {}
};

/// A binary file (saved index, safetensors, word vectors) is truncated, corrupted,
/// of another format or of an unsupported version.
class FormatError : public Error {
public:
    explicit FormatError(const std::string& m) : Error("format_error", m) {}
};

/// A file cannot be opened, read, written or renamed.
class IoError : public Error {
public:
    explicit IoError(const std::string& m) : Error("io_error", m) {}
};

/// A feature of an input (a tokenizer normalizer, a dtype, ...) that ragpp does not
/// implement: said clearly instead of computing a silently wrong result.
class UnsupportedError : public Error {
public:
    explicit UnsupportedError(const std::string& m) : Error("unsupported", m) {}
};

}  // namespace ragpp
