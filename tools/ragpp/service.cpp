// The commands as requests and replies (service.hpp).
#include "service.hpp"

#include "cli.hpp"

#include <ragpp/detail/json_dump.hpp>
#include <ragpp/filter/filter.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <cstdio>
#include <iostream>

namespace cli {

namespace {

std::string fmt(double v, const char* f = "%.3f") {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// The first `max_chars` bytes of `text` on one line (line ends as spaces, other
/// controls escaped), cut at a character boundary.
std::string first_lines(const std::string& text, std::size_t max_chars) {
    std::size_t end = std::min(max_chars, text.size());
    while (end < text.size() && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    std::string head = text.substr(0, end);
    for (char& c : head)
        if (c == '\n') c = ' ';
    return printable(head) + (end < text.size() ? "..." : "");
}

/// Warnings for the sources of a reply that changed or were deleted since they were
/// indexed. The engine lists only sources of passages the reader may read (it checks
/// the files of the results it found), so no warning names a file the reader may not see.
void freshness_warnings(const std::vector<std::string>& stale, const std::vector<std::string>& deleted, Reply& out) {
    for (const auto& s : stale)
        out.warnings.push_back("warning: '" + printable(s) +
                               "' changed after it was indexed: its passages may be outdated (run ragpp index again)");
    for (const auto& s : deleted)
        out.warnings.push_back("warning: '" + printable(s) +
                               "' was deleted after it was indexed: its passages are left out (run ragpp index again)");
}

/// The engine query of a request, checked (usage errors for what the user wrote).
ragpp::EngineQuery engine_query(const Engine& engine, const SearchRequest& rq, ragpp::SearchMode& mode) {
    mode = parse_mode_or_default(rq.mode, engine.config());
    // Each filter on its own, as written (no parenthesised join: it would add a level of
    // nesting and be quoted in errors); a bad expression is a usage error.
    for (const auto& f : rq.filters) usage_of([&] { return ragpp::parse_filter(f); });
    ragpp::EngineQuery q;
    q.k = rq.k;
    q.mode = mode;
    q.filters = rq.filters;
    q.principal = rq.principal;
    q.reranker = check_reranker(rq.reranker);
    q.check_sources = rq.check_sources;
    q.search = rq.settings ? *rq.settings : engine.config().search;
    return q;
}

/// The members of a JSON object request, read with the checks of service.hpp.
struct Fields {
    const nlohmann::json& j;
    const char* member;

    [[nodiscard]] std::string name(const char* n) const { return std::string(member) + " '" + n + "'"; }
    void only(std::initializer_list<const char*> names) const {
        if (!j.is_object()) throw RequestError(std::string("the ") + member + "s must be a JSON object");
        for (const auto& [key, value] : j.items()) {
            bool known = false;
            for (const char* n : names) known = known || key == n;
            if (!known) throw RequestError("unknown " + std::string(member) + " '" + printable(key) + "'");
        }
    }
    [[nodiscard]] std::string text(const char* n, bool required) const {
        const auto it = j.find(n);
        if (it == j.end() || it->is_null()) {
            if (required) throw RequestError(name(n) + " is required");
            return {};
        }
        if (!it->is_string()) throw RequestError(name(n) + " must be a string");
        return it->get<std::string>();
    }
    [[nodiscard]] std::size_t count(const char* n, std::size_t fallback, std::size_t lo, std::size_t hi) const {
        const auto it = j.find(n);
        if (it == j.end() || it->is_null()) return fallback;
        if (!it->is_number_integer() || it->get<long long>() < static_cast<long long>(lo) ||
            it->get<long long>() > static_cast<long long>(hi))
            throw RequestError(name(n) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return static_cast<std::size_t>(it->get<long long>());
    }
    [[nodiscard]] std::vector<std::string> filters() const {
        const auto it = j.find("filter");
        if (it == j.end() || it->is_null()) return {};
        if (it->is_string()) return {it->get<std::string>()};
        std::vector<std::string> out;
        if (it->is_array())
            for (const auto& f : *it)
                if (f.is_string()) out.push_back(f.get<std::string>());
        if (!it->is_array() || out.size() != it->size())
            throw RequestError(name("filter") + " must be a string or an array of strings");
        return out;
    }
};

}  // namespace

SearchRequest search_request(const nlohmann::json& fields, std::size_t max_k, const ragpp::Principal& reader,
                             const char* member) {
    const Fields f{fields, member};
    f.only({"query", "k", "mode", "filter"});
    SearchRequest rq;
    rq.query = f.text("query", true);
    rq.k = f.count("k", 5, 1, max_k);
    rq.mode = f.text("mode", false);
    rq.filters = f.filters();
    rq.principal = reader;
    return rq;
}

AskRequest ask_request(const nlohmann::json& fields, const ragpp::Principal& reader, const char* member) {
    const Fields f{fields, member};
    f.only({"question", "passages", "budget", "mode", "filter"});
    AskRequest rq;
    rq.search.query = f.text("question", true);
    rq.search.k = f.count("passages", 5, 1, 50);
    rq.answer.evidence.token_budget = f.count("budget", 1500, 1, 100000);
    rq.search.mode = f.text("mode", false);
    rq.search.filters = f.filters();
    rq.search.principal = reader;
    return rq;
}

std::string source_spec(std::string source, const std::string& lines) {
    if (lines.empty()) return source;
    const auto colon = source.rfind(':');
    if (colon != std::string::npos && source.find_first_not_of("0123456789#", colon + 1) == std::string::npos)
        source.resize(colon);
    return source + ":" + lines;
}

std::string get_request(const nlohmann::json& fields, const char* member) {
    const Fields f{fields, member};
    f.only({"source", "lines"});
    return source_spec(f.text("source", true), f.text("lines", false));
}

void no_request_fields(const nlohmann::json& fields, const char* member) { Fields{fields, member}.only({}); }

namespace {

/// The engine's lists, in the order of a result's trace.
constexpr const char* list_names[] = {"bm25", "vector"};

/// ragpp search's JSON, written straight from the results (no tree of the passages to build
/// and copy): compact, the members of each object in name order as nlohmann's objects keep
/// them, so that a tree read back from it dumps to the same bytes (tests/golden's
/// search-v4.bm25.json was written from a tree).
void append_search_json(std::string& o, const ragpp::EngineResults& found, const std::string& mode,
                        const std::string& note, const std::string& hint) {
    using ragpp::detail::append_json_number;
    using ragpp::detail::append_json_string;
    const auto list = [&](const std::vector<std::string>& items) {
        o += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i) o += ',';
            append_json_string(o, items[i]);
        }
        o += ']';
    };
    const auto count = [&](std::size_t n) { o += std::to_string(n); };
    std::size_t text_bytes = 0;
    for (const auto& r : found.results) text_bytes += r.document->text.size() + 256;
    o.reserve(o.size() + text_bytes + 256);
    o += '{';
    if (!found.deleted_sources.empty()) {
        o += "\"deleted_sources\":";
        list(found.deleted_sources);
        o += ',';
    }
    if (!hint.empty()) {
        o += "\"filter_note\":";
        append_json_string(o, hint);
        o += ',';
    }
    o += "\"mode\":";
    append_json_string(o, mode);
    o += ",\"results\":[";
    for (std::size_t i = 0; i < found.results.size(); ++i) {
        const auto& r = found.results[i];
        if (i) o += ',';
        o += "{\"citation\":";
        append_json_string(o, citation(*r.document));
        o += ",\"id\":";
        append_json_string(o, r.document->id);
        o += ",\"rank\":";
        count(i + 1);
        if (r.rerank) {
            o += ",\"rerank\":{\"fused_rank\":";
            count(r.rerank->fused_rank);
            o += ",\"fused_score\":";
            append_json_number(o, r.rerank->fused_score);
            o += ",\"score\":";
            append_json_number(o, r.rerank->reranker_score);
            o += '}';
        }
        o += ",\"score\":";
        append_json_number(o, r.score);
        o += r.stale ? ",\"stale\":true" : ",\"stale\":false";
        o += ",\"text\":";
        append_json_string(o, r.document->text);
        o += ",\"trace\":{";
        for (std::size_t x = 0; x < r.trace.size(); ++x) {
            if (x) o += ',';
            o += '"';
            o += list_names[x];
            o += "\":";
            if (r.trace[x].rank) {
                o += "{\"rank\":";
                count(*r.trace[x].rank);
                o += ",\"score\":";
                append_json_number(o, *r.trace[x].score);
                o += '}';
            } else {
                o += "null";
            }
        }
        o += "}}";
    }
    o += ']';
    if (!found.stale_sources.empty()) {
        o += ",\"stale_sources\":";
        list(found.stale_sources);
    }
    if (!note.empty()) {
        o += ",\"vector_list_note\":";
        append_json_string(o, note);
    }
    o += note.empty() ? ",\"vector_list_used\":true}" : ",\"vector_list_used\":false}";
}

}  // namespace

Reply search(const Engine& engine, const SearchRequest& rq) {
    ragpp::SearchMode mode{};
    const ragpp::EngineQuery q = engine_query(engine, rq, mode);
    const auto found = cli::search(engine, rq.query, q);
    Reply out;
    freshness_warnings(found.stale_sources, found.deleted_sources, out);
    const auto& results = found.results;
    // A filter that matches nothing the reader may read: say why (a misspelt field).
    const std::string hint = results.empty() ? engine.filter_hint(q.filters, q.principal) : std::string();
    if (!hint.empty()) out.warnings.push_back("note: " + printable(hint));
    const std::string note = vector_list_note(mode, rq.mode, engine.config().embedder, *q.search);

    // One writer for every interface: the tree (the command's --json, MCP's structured
    // content) is read back from its text.
    append_search_json(out.json_text, found, mode_name(mode), note, hint);
    if (rq.json_tree) {
        out.json = nlohmann::json::parse(out.json_text);
        out.json_text.clear();
    }
    if (!rq.text) return out;

    std::string& t = out.text;
    if (!note.empty()) t += "note: " + note + "\n";
    if (results.empty()) t += "no result for \"" + printable(rq.query) + "\"\n";
    char buf[64];
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        std::snprintf(buf, sizeof buf, "%2zu. ", i + 1);
        t += buf + printable(citation(*r.document));
        if (r.rerank) {
            std::snprintf(buf, sizeof buf, " %.4f (fused #%zu %.4f)", r.rerank->reranker_score, r.rerank->fused_rank,
                          r.rerank->fused_score);
            t += "\n    " + q.reranker + buf;
        } else {
            t += std::string(r.stale ? "  (stale: the source changed)" : "") + "\n    fused " + fmt(r.score, "%.4f");
        }
        for (std::size_t x = 0; x < r.trace.size(); ++x) {
            if (r.trace[x].rank) {
                std::snprintf(buf, sizeof buf, "   %s #%zu (%.3f)", list_names[x], *r.trace[x].rank, *r.trace[x].score);
                t += buf;
            } else {
                t += std::string("   ") + list_names[x] + " -";
            }
        }
        t += "\n    " + first_lines(r.document->text, 160) + "\n";
    }
    return out;
}

std::string shell_word(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
        return std::isalnum(c) || (c != 0 && std::strchr("._/-+=:@,%", c) != nullptr);
    });
    if (plain) return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

Reply ask(const Engine& engine, const AskRequest& rq) {
    ragpp::SearchMode mode{};
    const ragpp::EngineQuery q = engine_query(engine, rq.search, mode);
    const std::string& question = rq.search.query;
    // The decision is the library's (ragpp::Engine::answer); this shapes it.
    ragpp::AnswerOptions options = rq.answer;
    if (!rq.reopen.empty() && engine.corpus_kind() == "folder" && options.evidence.reopen.empty() &&
        options.evidence.instructions == ragpp::default_evidence_instructions)
        options.evidence.reopen = rq.reopen;
    const auto a = engine.answer(question, q, options);
    Reply out;
    freshness_warnings(a.stale_sources, a.deleted_sources, out);
    nlohmann::json& j = out.json;
    j = {{"question", question},         {"answered", a.answered}, {"confidence", a.confidence},
         {"min_confidence", a.min_confidence}, {"reranker", q.reranker}, {"mode", mode_name(mode)}};
    const std::string note = vector_list_note(mode, rq.search.mode, engine.config().embedder, *q.search);
    j["vector_list_used"] = note.empty();
    if (!note.empty()) {
        j["vector_list_note"] = note;
        out.text_notes.push_back("note: " + note);  // stdout is the evidence, for the model
    }
    j["signals"] = {{"coverage", a.signals.coverage},
                    {"passage_coverage", a.coverage.passages},
                    {"reranker", a.signals.reranker ? nlohmann::json(*a.signals.reranker) : nlohmann::json(nullptr)},
                    {"passages", a.signals.results}};
    j["missing"] = a.coverage.missing;
    j["unknown"] = a.coverage.unknown;
    if (!a.stale_sources.empty()) j["stale_sources"] = a.stale_sources;
    if (!a.deleted_sources.empty()) j["deleted_sources"] = a.deleted_sources;

    if (!a.answered) {
        const std::string best = a.passages.empty() ? std::string() : citation(*a.passages.front().document);
        j["best"] = a.passages.empty()
                        ? nlohmann::json(nullptr)
                        : nlohmann::json{{"id", a.passages.front().document->id}, {"citation", best}};
        auto reasons = a.reasons;
        if (a.passages.empty())
            if (auto hint = engine.filter_hint(q.filters, q.principal); !hint.empty()) reasons.push_back(hint);
        j["reasons"] = reasons;
        out.text = "No answer: the index holds no passage that answers this question well enough (confidence " +
                   fmt(a.confidence) + " < " + fmt(a.min_confidence) + ").\n";
        if (!best.empty()) out.text += "Best passage found: " + printable(best) + "\n";
        out.text += "Why it was not enough:\n";
        for (const auto& r : reasons) out.text += "  - " + printable(r) + "\n";
        return out;
    }

    const auto& ev = *a.evidence;
    nlohmann::json sources = nlohmann::json::array();
    for (const auto& s : ev.sources)
        sources.push_back({{"number", s.number},
                           {"location", s.location},
                           {"citation", s.citation},
                           {"chunks", s.chunk_ids},
                           {"tokens", s.tokens},
                           {"truncated", s.truncated},
                           {"stale", std::any_of(ev.flags.begin(), ev.flags.end(),
                                                 [&](const auto& f) {
                                                     return f.field == "stale" &&
                                                            std::find(f.sources.begin(), f.sources.end(), s.number) !=
                                                                f.sources.end();
                                                 })},
                           {"context", s.context},
                           {"text", s.text}});
    nlohmann::json flags = nlohmann::json::array();
    for (const auto& f : ev.flags)
        flags.push_back({{"sources", f.sources}, {"subject", f.subject}, {"field", f.field}, {"fields", f.fields},
                         {"values", f.values}, {"message", f.message}});
    const std::string prompt = ev.render();
    j["evidence"] = {{"nonce", ev.nonce}, {"sources", sources}, {"flags", flags}, {"omitted", ev.omitted},
                     {"tokens", ev.tokens}, {"prompt", prompt}};
    out.text = prompt;
    out.text_notes.push_back("confidence " + fmt(a.confidence) + " (threshold " + fmt(a.min_confidence) + "), " +
                             std::to_string(ev.sources.size()) + " sources, " + std::to_string(ev.tokens) + " tokens");
    return out;
}

Reply get(const Engine& engine, const std::string& spec, const ragpp::Principal& reader) {
    const auto t = engine.reopen(spec, reader);
    Reply out;
    out.json = {{"source", t.source},
                {"citation", t.citation},
                {"first_line", t.first_line},
                {"last_line", t.last_line},
                {"section", t.section.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.section)},
                {"line_count", t.line_count},
                {"changed", t.changed},
                {"deleted", t.deleted},
                {"text", t.text}};
    if (t.deleted) {
        out.warnings.push_back("error: '" + printable(t.source) +
                               "' is gone: deleted since it was indexed (run ragpp index again)");
        out.exit_status = 1;
        return out;
    }
    std::string head = printable(t.citation);
    if (!t.section.empty() && t.section != t.citation) head += "  (section " + printable(t.section) + ")";
    if (t.changed) {
        head += "  (changed since it was indexed: lines may have moved)";
        out.warnings.push_back("warning: '" + printable(t.source) +
                               "' changed after it was indexed: these are its lines now (run ragpp index again)");
    }
    if (t.first_line == 0 && t.line_count > 0) head += "  (the file is shorter now: nothing at those lines)";
    out.text = head + "\n" + t.text + (t.text.empty() ? "" : "\n");
    return out;
}

Reply status(const Engine& engine, const std::filesystem::path& dir, const ragpp::Principal& reader) {
    const auto s = engine.status(reader);
    Reply out;
    out.json = {{"index", dir.string()},          {"generation", s.generation},
                {"chunks", s.chunks},             {"sources", s.sources},
                {"corpus_root", s.corpus_root},   {"changed_sources", s.changed_sources},
                {"deleted_sources", s.deleted_sources}};
    std::string& t = out.text;
    t = "index " + printable(dir.string()) + ", generation " + std::to_string(s.generation) + "\n";
    t += std::to_string(s.chunks) + " chunks of " + std::to_string(s.sources) + " sources readable, from " +
         printable(s.corpus_root) + "\n";
    if (s.changed_sources.empty() && s.deleted_sources.empty()) t += "every source as indexed\n";
    for (const auto& c : s.changed_sources) t += "changed since indexed: " + printable(c) + "\n";
    for (const auto& d : s.deleted_sources) t += "deleted since indexed: " + printable(d) + "\n";
    return out;
}

int print_reply(const Reply& reply, bool json) {
    for (const auto& w : reply.warnings) std::fprintf(stderr, "%s\n", w.c_str());
    if (json) {
        std::cout << dump_json(reply.json, 2) << "\n";
    } else {
        for (const auto& n : reply.text_notes) std::fprintf(stderr, "%s\n", n.c_str());
        std::cout << reply.text;
    }
    std::cout.flush();
    return reply.exit_status;
}

}  // namespace cli
