// bench_hnsw's peer (bench/hnswlib_peer.hpp): hnswlib compiled with its users' flags
// (bench/hnsw.cmake sets them on this file only and passes them as RAGPP_PEER_FLAGS).
#include "hnswlib_peer.hpp"

#include <algorithm>
#include <stdexcept>

#if __has_include(<hnswlib/hnswlib.h>)
#include <hnswlib/hnswlib.h>
#define RAGPP_HAVE_HNSWLIB 1
#else
#define RAGPP_HAVE_HNSWLIB 0
#endif

#ifndef RAGPP_PEER_FLAGS
#define RAGPP_PEER_FLAGS "the project's flags"
#endif

namespace bench {

#if RAGPP_HAVE_HNSWLIB
struct HnswlibPeer::Impl {
    hnswlib::InnerProductSpace space;
    std::unique_ptr<hnswlib::HierarchicalNSW<float>> index;
    explicit Impl(std::size_t dim) : space(dim) {}
};
bool HnswlibPeer::available() { return true; }
HnswlibPeer::HnswlibPeer(std::size_t dim, std::size_t capacity, std::size_t M, std::size_t ef_construction)
    : impl_(std::make_unique<Impl>(dim)) {
    impl_->index = std::make_unique<hnswlib::HierarchicalNSW<float>>(&impl_->space, capacity, M, ef_construction, 100);
}
void HnswlibPeer::add(const float* row, std::size_t label) { impl_->index->addPoint(row, label); }
std::vector<std::uint32_t> HnswlibPeer::search(const float* query, std::size_t k, std::size_t ef) {
    impl_->index->setEf(ef);
    auto pq = impl_->index->searchKnn(query, k);
    std::vector<std::uint32_t> ids;
    ids.reserve(pq.size());
    for (; !pq.empty(); pq.pop()) ids.push_back(static_cast<std::uint32_t>(pq.top().second));
    std::reverse(ids.begin(), ids.end());
    return ids;
}
void HnswlibPeer::save(const std::string& path) const { impl_->index->saveIndex(path); }
void HnswlibPeer::load(const std::string& path, std::size_t capacity) {
    impl_->index = std::make_unique<hnswlib::HierarchicalNSW<float>>(&impl_->space, path, false, capacity);
}
#else
struct HnswlibPeer::Impl {};
bool HnswlibPeer::available() { return false; }
HnswlibPeer::HnswlibPeer(std::size_t, std::size_t, std::size_t, std::size_t) {
    throw std::runtime_error("hnswlib is not installed");
}
void HnswlibPeer::add(const float*, std::size_t) {}
std::vector<std::uint32_t> HnswlibPeer::search(const float*, std::size_t, std::size_t) { return {}; }
void HnswlibPeer::save(const std::string&) const {}
void HnswlibPeer::load(const std::string&, std::size_t) {}
#endif
HnswlibPeer::~HnswlibPeer() = default;
std::string HnswlibPeer::flags() { return RAGPP_PEER_FLAGS; }

}  // namespace bench
