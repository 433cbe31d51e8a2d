// ragpp: access control by groups.
//
// A document lists the groups that may read it in one metadata field ("groups" by
// default): a list of strings, or a single string for one group. A query made on
// behalf of a Principal sees a document only when the two share a group.
//
// Documents without the field (unlabeled) follow the policy's explicit default,
// chosen at construction: Unlabeled::deny (the default: secure by default, a document
// nobody labeled is visible to nobody but the system principal) or Unlabeled::allow
// (public unless labeled). A field present but empty, or holding a number or a date,
// shares no group with anyone: denied under both defaults. The Markdown chunker locks a
// note whose front matter has a slip in its declarations that way (an empty list, see
// chunk/front_matter.hpp). Engine's default is Unlabeled::allow (EngineConfig::unlabeled).
//
// Principal::system() is the explicit way to bypass access control (indexing jobs,
// administration); a default-constructed Principal has no group and sees only
// unlabeled documents under Unlabeled::allow, nothing under Unlabeled::deny.
//
// Access compiles to a Filter, so it goes through the same MetadataIndex postings as
// any other filter and is checked by the same oracle (Filter::matches).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <ragpp/core/types.hpp>
#include <ragpp/filter/filter.hpp>

namespace ragpp {

/// Who a query is made for.
struct Principal {
    std::vector<std::string> groups;
    /// Sees every document, whatever its groups. Only through Principal::system().
    bool unrestricted = false;

    [[nodiscard]] static Principal with_groups(std::vector<std::string> g) { return Principal{std::move(g), false}; }
    [[nodiscard]] static Principal system() { return Principal{{}, true}; }
};

/// What happens to a document without the access field.
enum class Unlabeled { deny, allow };

class AccessPolicy {
public:
    /// Deny by default: unlabeled documents are visible to the system principal only.
    AccessPolicy() = default;
    explicit AccessPolicy(Unlabeled unlabeled, std::string field = "groups")
        : unlabeled_(unlabeled), field_(std::move(field)) {}

    [[nodiscard]] Unlabeled unlabeled() const noexcept { return unlabeled_; }
    [[nodiscard]] const std::string& field() const noexcept { return field_; }

    /// The documents `principal` may read, as a filter.
    [[nodiscard]] Filter filter_for(const Principal& principal) const {
        if (principal.unrestricted) return Filter::all();
        std::vector<FilterValue> groups(principal.groups.begin(), principal.groups.end());
        Filter labeled = groups.empty() ? Filter::none() : Filter::in(field_, std::move(groups));
        if (unlabeled_ == Unlabeled::allow) return std::move(labeled) || !Filter::exists(field_);
        return labeled;
    }

    /// Whether `principal` may read a document with `metadata` (the reference check).
    [[nodiscard]] bool allows(const Principal& principal, const Metadata& metadata) const {
        return filter_for(principal).matches(metadata);
    }

private:
    Unlabeled unlabeled_ = Unlabeled::deny;
    std::string field_ = "groups";
};

}  // namespace ragpp
