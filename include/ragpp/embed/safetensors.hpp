// ragpp: a safetensors reader (the format of HuggingFace model weights).
//
// Format (https://huggingface.co/docs/safetensors, "Format"): an 8-byte little-endian
// unsigned header length N; N bytes of UTF-8 JSON, an object mapping each tensor name
// to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the byte
// after the header), plus an optional "__metadata__" object of strings; then the data.
//
// Everything is checked before use: N within the file (and at most 100 MB), the JSON
// well-formed and an object, each dtype known, each shape a list of non-negative
// integers, end - begin == product(shape) * size(dtype), end within the data, and no
// two tensors overlapping. Any failure is a FormatError naming the file and tensor.
// The file is read into memory or memory-mapped (read-only, POSIX mmap).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/detail/simd.hpp>
#include <ragpp/embed/detail/safetensors.hpp>
#include <ragpp/embed/dtype.hpp>
#include <ragpp/embed/embedder.hpp>

namespace ragpp {

/// One tensor of a safetensors file: a view into the file's bytes.
struct TensorView {
    std::string name;
    Dtype dtype = Dtype::F32;
    std::vector<std::size_t> shape;
    std::span<const std::byte> bytes;

    [[nodiscard]] std::size_t elements() const noexcept { return bytes.size() / dtype_size(dtype); }
};

class SafeTensors {
public:
    enum class Load { read, mmap };

    /// Opens and validates `path`. Throws IoError, or FormatError naming the file.
    explicit SafeTensors(const std::filesystem::path& path, Load load = Load::read)
        : name_(path.string()), file_(std::make_shared<detail::FileBytes>(path, load == Load::mmap)) {
        parse();
    }

    [[nodiscard]] const std::string& file_name() const noexcept { return name_; }
    [[nodiscard]] bool mapped() const noexcept { return file_->mapped(); }
    [[nodiscard]] bool contains(std::string_view tensor) const { return tensors_.count(std::string(tensor)) != 0; }
    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& [k, v] : tensors_) out.push_back(k);
        return out;
    }
    [[nodiscard]] const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }

    /// The tensor `name`; throws NotFoundError naming the file and the tensors present.
    [[nodiscard]] const TensorView& tensor(std::string_view name) const {
        auto it = tensors_.find(std::string(name));
        if (it == tensors_.end()) {
            std::string have;
            for (const auto& [k, v] : tensors_) have += (have.empty() ? "" : ", ") + k;
            throw NotFoundError("'" + name_ + "' has no tensor '" + std::string(name) + "' (it has: " + have + ")");
        }
        return it->second;
    }

    /// A 2-D tensor of F32, F16, BF16, F64 or I8 as float32 rows (I8 values are cast,
    /// not rescaled). Throws FormatError on another rank, UnsupportedError on another dtype.
    [[nodiscard]] RowMatrixXf matrix(std::string_view name) const {
        const TensorView& t = tensor(name);
        if (t.shape.size() != 2)
            throw FormatError("'" + name_ + "': tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()) +
                              ", expected 2");
        RowMatrixXf m(static_cast<Eigen::Index>(t.shape[0]), static_cast<Eigen::Index>(t.shape[1]));
        to_floats(t, std::span<float>(m.data(), static_cast<std::size_t>(m.size())));
        return m;
    }
    /// A 1-D tensor of a float dtype as doubles.
    [[nodiscard]] std::vector<double> doubles(std::string_view name) const {
        const TensorView& t = rank1(name);
        std::vector<double> out(t.elements());
        if (t.dtype == Dtype::F64) {
            if (!out.empty()) std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
        } else {
            std::vector<float> f(t.elements());
            to_floats(t, f);
            std::copy(f.begin(), f.end(), out.begin());
        }
        return out;
    }
    /// A 1-D tensor of an integer dtype as int64.
    [[nodiscard]] std::vector<std::int64_t> integers(std::string_view name) const {
        const TensorView& t = rank1(name);
        std::vector<std::int64_t> out(t.elements());
        const auto* p = t.bytes.data();
        for (std::size_t i = 0; i < out.size(); ++i) {
            switch (t.dtype) {
                case Dtype::I8: out[i] = load<std::int8_t>(p, i); break;
                case Dtype::U8: out[i] = load<std::uint8_t>(p, i); break;
                case Dtype::I16: out[i] = load<std::int16_t>(p, i); break;
                case Dtype::U16: out[i] = load<std::uint16_t>(p, i); break;
                case Dtype::I32: out[i] = load<std::int32_t>(p, i); break;
                case Dtype::U32: out[i] = load<std::uint32_t>(p, i); break;
                case Dtype::I64: out[i] = load<std::int64_t>(p, i); break;
                default:
                    throw UnsupportedError("'" + name_ + "': tensor '" + t.name + "' is not of an integer dtype");
            }
        }
        return out;
    }

    /// Converts any float dtype (and I8) to float32 into `out` (elements() long).
    void to_floats(const TensorView& t, std::span<float> out) const {
        const auto* p = t.bytes.data();
        const std::size_t n = t.elements();
        switch (t.dtype) {
            case Dtype::F32:  // memcpy of nothing from or to null is still undefined: skip it
                if (n > 0) std::memcpy(out.data(), p, n * 4);
                break;
            case Dtype::F64:
                for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<double>(p, i));
                break;
            case Dtype::F16:
                for (std::size_t i = 0; i < n; ++i) out[i] = detail::simd::f16_to_f32(load<std::uint16_t>(p, i));
                break;
            case Dtype::BF16:
                for (std::size_t i = 0; i < n; ++i)
                    out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(load<std::uint16_t>(p, i)) << 16);
                break;
            case Dtype::I8:
                for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int8_t>(p, i));
                break;
            default:
                throw UnsupportedError("'" + name_ + "': tensor '" + t.name + "' has a dtype ragpp cannot read as floats");
        }
    }

private:
    template <class T>
    static T load(const std::byte* p, std::size_t i) noexcept {
        T v;
        std::memcpy(&v, p + i * sizeof(T), sizeof(T));
        return v;
    }

    const TensorView& rank1(std::string_view name) const {
        const TensorView& t = tensor(name);
        if (t.shape.size() != 1)
            throw FormatError("'" + name_ + "': tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()) +
                              ", expected 1");
        return t;
    }

    [[noreturn]] void fail(const std::string& what) const { throw FormatError("'" + name_ + "': " + what); }

    void parse() {
        const std::size_t size = file_->size();
        if (size < 8) fail("too short for a safetensors header (" + std::to_string(size) + " bytes)");
        std::uint64_t n = 0;
        std::memcpy(&n, file_->data(), 8);
        if (n > 100'000'000ULL) fail("header length " + std::to_string(n) + " exceeds 100 MB");
        if (n > size - 8) fail("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(size) + " bytes)");
        nlohmann::json header;
        const std::string_view text(file_->data() + 8, static_cast<std::size_t>(n));
        if (detail::json_too_deep(text) != std::string_view::npos)
            fail("header nests deeper than " + std::to_string(detail::max_json_depth) + " levels");
        try {
            header = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception& e) {
            fail(std::string("header is not valid JSON: ") + e.what());
        }
        if (!header.is_object()) fail("header is not a JSON object");
        const std::size_t data_begin = 8 + static_cast<std::size_t>(n);
        const std::size_t data_size = size - data_begin;
        const auto* data = reinterpret_cast<const std::byte*>(file_->data()) + data_begin;
        std::vector<std::pair<std::size_t, std::size_t>> spans;
        for (const auto& [key, value] : header.items()) {
            if (key == "__metadata__") {
                if (!value.is_object()) fail("__metadata__ is not an object");
                for (const auto& [mk, mv] : value.items())
                    if (mv.is_string()) metadata_[mk] = mv.get<std::string>();
                continue;
            }
            const std::string where = "tensor '" + key + "'";
            if (!value.is_object()) fail(where + " is not an object");
            TensorView t;
            t.name = key;
            if (!value.contains("dtype") || !value["dtype"].is_string()) fail(where + " has no dtype");
            const std::string dt = value["dtype"].get<std::string>();
            auto it = std::find_if(std::begin(detail::dtype_names), std::end(detail::dtype_names),
                                   [&](const auto& p) { return p.first == dt; });
            if (it == std::end(detail::dtype_names)) fail(where + " has unknown dtype '" + dt + "'");
            t.dtype = it->second;
            if (!value.contains("shape") || !value["shape"].is_array()) fail(where + " has no shape list");
            std::size_t count = 1;
            for (const auto& d : value["shape"]) {
                if (!d.is_number_unsigned()) fail(where + " has a shape entry that is not a non-negative integer");
                const auto v = d.get<std::uint64_t>();
                // Each extent and their product at most 2^48 (an extent beyond it would
                // overflow Eigen's signed index even when another extent is 0).
                if (v > (std::uint64_t{1} << 48) || (v != 0 && count > (std::uint64_t{1} << 48) / v))
                    fail(where + " has an absurd shape");
                count *= static_cast<std::size_t>(v);
                t.shape.push_back(static_cast<std::size_t>(v));
            }
            const auto& off = value.contains("data_offsets") ? value["data_offsets"] : nlohmann::json();
            if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
                fail(where + " has no valid data_offsets [begin, end]");
            const auto begin = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
            if (begin > end || end > data_size)
                fail(where + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                     "] fall outside the data (" + std::to_string(data_size) + " bytes)");
            if (end - begin != count * dtype_size(t.dtype))
                fail(where + " holds " + std::to_string(end - begin) + " bytes but its shape and dtype " + dt + " need " +
                     std::to_string(count * dtype_size(t.dtype)));
            t.bytes = std::span<const std::byte>(data + begin, static_cast<std::size_t>(end - begin));
            spans.emplace_back(static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
            tensors_.emplace(key, std::move(t));
        }
        std::sort(spans.begin(), spans.end());
        for (std::size_t i = 1; i < spans.size(); ++i)
            if (spans[i].first < spans[i - 1].second && spans[i].first != spans[i].second) fail("two tensors overlap");
    }

    std::string name_;
    std::shared_ptr<detail::FileBytes> file_;
    std::map<std::string, TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

}  // namespace ragpp
