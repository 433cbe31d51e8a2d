// ragpp detail: read_file, the one whole-file reader of the library and the tool.
// Every header that needs a file's bytes calls it, so each failure has one message
// naming the file.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <ragpp/core/error.hpp>

namespace ragpp::detail {

/// The whole content of `path`, in binary mode. Throws IoError naming the file when it
/// does not exist, is a directory, or cannot be opened or read.
[[nodiscard]] inline std::string read_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw IoError("cannot read '" + path.string() + "': '" + path.string() + "' is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot open '" + path.string() + "' for reading");
    std::string bytes;
    std::string buf(std::size_t{1} << 16, '\0');
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        bytes.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) throw IoError("cannot read '" + path.string() + "'");
    return bytes;
}

}  // namespace ragpp::detail
