// ragpp: the Metadata <-> JSON codec of saved indexes and JSONL corpora
// (declarations first; implementation follows).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

inline nlohmann::json metadata_to_json(const Metadata&) { throw UnsupportedError("not yet"); }
inline Metadata metadata_from_json(const nlohmann::json&, const std::string&) { throw UnsupportedError("not yet"); }

}  // namespace ragpp
