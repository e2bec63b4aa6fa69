#include "drift/fingerprint.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "drift/catalog_reads.hpp"
#include "shardside/names.hpp"

namespace shardctl::drift {

std::string kind_of(const std::string& key) { return key.substr(0, key.find(':')); }

std::string name_of(const std::string& key) {
  auto colon = key.find(':');
  return colon == std::string::npos ? key : key.substr(colon + 1);
}

// The objects of a shard, assembled from its catalog reads (catalog_reads.hpp), each definition
// written as PostgreSQL writes it (pg_get_indexdef, concat_ws, format_type ...).
namespace {

// Fixed oids of the catalogs an extension's members are recorded under.
constexpr const char* kPgClass = "1259";
constexpr const char* kPgProc = "1255";
constexpr const char* kPgType = "1247";

struct Relation {
  std::string ns, name, kind;  // relnamespace, quote_ident(relname), relkind
  std::string am;              // relam (indexes)
  std::string q, key;          // "ns.name", "table:ns.name" (tables and views in a compared schema)
};

// What the assembly needs to look up by oid.
struct Lookups {
  std::map<std::string, std::string> ns_all;  // every schema: oid -> quote_ident(nspname)
  std::set<std::string> ns_compared;          // the schemas compared
  std::set<std::string> members;              // "classid:objid" of extension members
  std::map<std::string, Relation> relations;  // oid >= 16384
  std::map<std::string, std::map<std::string, std::string>> attnames;  // table oid -> attnum -> name
  std::map<std::string, std::string> attcollations;                    // "table oid:attnum" -> collation
  std::map<std::string, std::string> collations;                       // oid -> regcollation text
  bool member(const char* classid, const std::string& oid) const { return members.count(std::string(classid) + ":" + oid) > 0; }
  // A table or view that is compared (in a compared schema, not an extension's).
  const Relation* table(const std::string& oid) const {
    auto it = relations.find(oid);
    return it == relations.end() || it->second.key.empty() ? nullptr : &it->second;
  }
};

bool compared_schema(const std::string& name) {
  if (name == "pg_catalog" || name == "information_schema" || shardside::is_own_schema(name)) return false;
  return name.rfind("pg_toast", 0) != 0 && name.rfind("pg_temp_", 0) != 0;
}

// PostgreSQL's text of an int2vector or oidvector: numbers separated by spaces.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < s.size()) {
    auto next = s.find(' ', at);
    if (next == std::string::npos) next = s.size();
    if (next > at) out.push_back(s.substr(at, next - at));
    at = next + 1;
  }
  return out;
}

// concat_ws(' ', ...) of the non-empty parts.
std::string joined(std::initializer_list<std::string> parts) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : " ") + p;
  return out;
}

// regexp_replace(btrim(s), '\s+', ' ', 'g'): a view's text on one line.
std::string one_line(const std::string& s) {
  auto first = s.find_first_not_of(' ');
  auto last = s.find_last_not_of(' ');
  std::string out;
  if (first == std::string::npos) return out;
  bool space = false;
  for (char c : s.substr(first, last - first + 1)) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

void read_schemas(const Reads& reads, Lookups& l, std::vector<Object>& out) {
  for (auto& r : reads[kNamespaces]) {
    l.ns_all[r[0]] = r[1];
    if (!compared_schema(r[2])) continue;
    l.ns_compared.insert(r[0]);
    out.push_back({"schema:" + r[1], "", "schema"});
  }
  for (auto& r : reads[kExtensions])
    out.push_back({"extension:" + r[0], "", "version " + r[1] + " in schema " + l.ns_all[r[2]]});
  for (auto& r : reads[kMembers])
    l.members.insert(r[0] + ":" + r[1]);
}

void read_relations(const Reads& reads, Lookups& l, std::vector<Object>& out,
                    std::map<std::string, std::string>& index_options) {
  auto rows = reads[kRelations];
  for (auto& r : rows) {
    Relation rel{r[1], r[2], r[3], r[11], "", ""};
    if (rel.kind == "i" || rel.kind == "I") index_options[r[0]] = r[10];
    bool table = rel.kind != "i" && rel.kind != "I" && rel.kind != "S";
    if (table && l.ns_compared.count(rel.ns) && !l.member(kPgClass, r[0])) {
      rel.q = l.ns_all[rel.ns] + "." + rel.name;
      rel.key = (rel.kind == "v" || rel.kind == "m" ? "view:" : "table:") + rel.q;
    }
    l.relations[r[0]] = std::move(rel);
  }
  std::map<std::string, std::string> parent_of;
  for (auto& r : reads[kInherits])
    parent_of.emplace(r[0], r[1]);
  for (auto& r : rows) {
    const Relation* rel = l.table(r[0]);
    if (!rel) continue;
    const std::string& kind = rel->kind;
    std::string partition_of;
    if (r[5] == "t") {
      auto p = parent_of.find(r[0]);
      auto parent = p == parent_of.end() ? l.relations.end() : l.relations.find(p->second);
      if (parent != l.relations.end()) partition_of = "PARTITION OF " + l.ns_all[parent->second.ns] + "." + parent->second.name + " " + r[8];
    }
    out.push_back({rel->key, "",
                   joined({r[4] == "u" ? "unlogged" : "",
                           kind == "p"   ? "partitioned table"
                           : kind == "f" ? "foreign table"
                           : kind == "v" ? "view"
                           : kind == "m" ? "materialized view"
                                         : "table",
                           kind == "p" ? "PARTITION BY " + r[7] : "", partition_of, r[6] == "t" ? "ROW LEVEL SECURITY" : "",
                           kind == "v" || kind == "m" ? "AS " + one_line(r[9]) : ""})});
  }
}

// A COLLATE clause whose collation's name is read once every object has named its own
// (resolve_collations): a marker in the definition until then.
std::string collate_marker(Lookups& l, std::vector<std::size_t>& pending, std::size_t object, const std::string& oid) {
  l.collations[oid];
  if (pending.empty() || pending.back() != object) pending.push_back(object);
  return " COLLATE \x01" + oid + "\x01";
}

void resolve_collations(shardio::RawConn& shard, std::chrono::milliseconds timeout, Lookups& l, std::vector<Object>& out,
                        const std::vector<std::size_t>& pending) {
  if (pending.empty()) return;
  begin_read(shard, timeout);
  std::string list;
  for (const auto& [oid, _] : l.collations) list += (list.empty() ? "{" : ",") + oid;
  for (auto& r : shard.query("SELECT c, c::regcollation::text FROM unnest($1::oid[]) AS c", {list + "}"})) l.collations[r[0]] = r[1];
  shard.exec("ROLLBACK");
  for (std::size_t i : pending) {
    auto& def = out[i].definition;
    for (auto at = def.find('\x01'); at != std::string::npos; at = def.find('\x01', at)) {
      auto end = def.find('\x01', at + 1);
      if (end == std::string::npos) break;
      auto name = l.collations[def.substr(at + 1, end - at - 1)];
      def.replace(at, end - at + 1, name);
      at += name.size();
    }
  }
}

// The columns of every compared table and view; their names are kept for the indexes.
void read_columns(const Reads& reads, Lookups& l, std::vector<Object>& out, std::vector<std::size_t>& pending) {
  std::map<std::string, std::string> typcollation;
  for (auto& r : reads[kTypeCollations]) typcollation[r[0]] = r[1];
  std::map<std::string, std::string> defaults;  // "table oid:attnum" -> " DEFAULT ..." or " GENERATED ..."
  // A plain default is deparsed without its table (it cannot refer to columns; opening every
  // table would build its relation cache entry); a generated column's expression needs it.
  for (auto& r : reads[kDefaults])
    defaults[r[0] + ":" + r[1]] = r[2];
  for (auto& r : reads[kAttributes]) {
    const Relation* rel = l.table(r[0]);
    if (!rel) continue;
    l.attnames[r[0]][r[1]] = r[2];
    l.attcollations[r[0] + ":" + r[1]] = r[5];
    std::string def = r[3];
    auto tc = typcollation.find(r[4]);
    if (r[5] != "0" && r[5] != (tc == typcollation.end() ? "0" : tc->second)) def += collate_marker(l, pending, out.size(), r[5]);
    if (r[6] == "t") def += " NOT NULL";
    if (r[7] == "a") def += " GENERATED ALWAYS AS IDENTITY";
    if (r[7] == "d") def += " GENERATED BY DEFAULT AS IDENTITY";
    auto d = defaults.find(r[0] + ":" + r[1]);
    if (d != defaults.end()) def += d->second;
    out.push_back({"column:" + rel->q + "." + r[2], rel->key, def});
  }
}

// Constraints of compared tables (a CHECK by its expression tree, see read_definitions) and
// domains' constraints; returns the indexes that implement a primary key, unique or exclusion
// constraint (compared through the constraint).
std::set<std::string> read_constraints(const Reads& reads, Lookups& l, std::vector<Object>& out,
                                       std::map<std::string, std::vector<std::string>>& domain_checks) {
  std::set<std::string> constraint_indexes;
  for (auto& r : reads[kConstraints]) {
    if (r[4] == "p" || r[4] == "u" || r[4] == "x") constraint_indexes.insert(r[5]);
    if (r[1] == "0") {
      domain_checks[r[2]].push_back(r[6]);
      continue;
    }
    const Relation* rel = l.table(r[1]);
    if (!rel) continue;
    out.push_back({"constraint:" + rel->q + "." + r[3], rel->key, r[6], r[4] == "c" ? r[0] : ""});
  }
  return constraint_indexes;
}

// Indexes that no constraint stands for. A plain one is written out as pg_get_indexdef would
// (which opens the table); one with expressions or a predicate is deparsed by the server.
void read_indexes(const Reads& reads, Lookups& l, std::vector<Object>& out, std::vector<std::size_t>& pending,
                  const std::set<std::string>& constraint_indexes, const std::map<std::string, std::string>& index_options) {
  std::map<std::string, std::string> am;
  for (auto& r : reads[kAccessMethods]) am[r[0]] = r[1];
  std::map<std::string, std::string> opclass;  // non-default operator classes: oid -> "ns.name"
  for (auto& r : reads[kOperatorClasses])
    opclass[r[0]] = l.ns_all[r[1]] + "." + r[2];
  for (auto& r : reads[kIndexes]) {
    const Relation* rel = l.table(r[1]);
    auto self = l.relations.find(r[0]);
    if (!rel || self == l.relations.end() || !l.ns_compared.count(self->second.ns) || constraint_indexes.count(r[0])) continue;
    std::string def;
    bool plain = r[10].empty();
    if (plain) {
      auto keys = words(r[5]), collations = words(r[6]), classes = words(r[7]), options = words(r[8]);
      std::size_t nkey = std::stoul(r[4]);
      std::string key_list, include_list;
      const auto& names = l.attnames[r[1]];
      for (std::size_t n = 0; n < keys.size(); ++n) {
        auto name = names.find(keys[n]);
        if (name == names.end()) continue;
        if (n >= nkey) {
          include_list += (include_list.empty() ? "" : ", ") + name->second;
          continue;
        }
        std::string col = name->second;
        if (n < collations.size() && collations[n] != "0" && collations[n] != l.attcollations[r[1] + ":" + keys[n]])
          col += collate_marker(l, pending, out.size(), collations[n]);
        auto oc = n < classes.size() ? opclass.find(classes[n]) : opclass.end();
        if (oc != opclass.end()) col += " " + oc->second;
        int option = n < options.size() ? std::stoi(options[n]) : 0;
        if (option & 1) col += " DESC";
        if ((option & 3) == 1) col += " NULLS LAST";
        if ((option & 3) == 2) col += " NULLS FIRST";
        key_list += (key_list.empty() ? "" : ", ") + col;
      }
      def = "CREATE " + std::string(r[2] == "t" ? "UNIQUE " : "") + "INDEX " + self->second.name + " ON " +
            (rel->kind == "p" ? "ONLY " : "") + rel->q + " USING " + am[self->second.am] + " (" + key_list + ")" +
            (include_list.empty() ? "" : " INCLUDE (" + include_list + ")") + (r[9] == "t" ? " NULLS NOT DISTINCT" : "");
      auto with = index_options.find(r[0]);
      if (with != index_options.end()) def += with->second;
    } else {
      def = r[10];
    }
    if (r[3] != "t") def += " INVALID";
    out.push_back({"index:" + l.ns_all[self->second.ns] + "." + self->second.name, rel->key, def});
  }
}

void read_triggers(const Reads& reads, const Lookups& l, std::vector<Object>& out) {
  for (auto& r : reads[kTriggers]) {
    const Relation* rel = l.table(r[0]);
    if (!rel) continue;
    std::string state = r[3] == "D" ? " (disabled)" : r[3] == "A" ? " (enabled always)" : r[3] == "R" ? " (enabled replica)" : "";
    out.push_back({"trigger:" + rel->q + "." + r[1], rel->key, r[2] + state});
  }
}

void read_functions(const Reads& reads, Lookups& l, std::vector<Object>& out) {
  std::map<std::string, std::string> language;
  for (auto& r : reads[kLanguages]) language[r[0]] = r[1];
  for (auto& r : reads[kFunctions]) {
    if (!l.ns_compared.count(r[1]) || l.member(kPgProc, r[0]) || !language.count(r[6])) continue;
    const std::string& kind = r[2];
    std::string prefix = kind == "p" ? "procedure:" : kind == "a" ? "aggregate:" : "function:";
    out.push_back({prefix + l.ns_all[r[1]] + "." + r[3] + "(" + r[4] + ")", "",
                   joined({kind == "f" || kind == "w" ? "RETURNS " + r[5] : "", "LANGUAGE " + language[r[6]],
                           kind == "p"          ? ""
                           : r[7] == "i"        ? "IMMUTABLE"
                           : r[7] == "s"        ? "STABLE"
                                                : "VOLATILE",
                           r[8] == "t" ? "STRICT" : "", r[9] == "t" ? "SECURITY DEFINER" : "", r[10], "body md5 " + r[11]})});
  }
}

void read_sequences(const Reads& reads, const Lookups& l, std::vector<Object>& out) {
  for (auto& r : reads[kSequences]) {
    auto rel = l.relations.find(r[0]);
    if (rel == l.relations.end() || !l.ns_compared.count(rel->second.ns) || l.member(kPgClass, r[0])) continue;
    out.push_back({"sequence:" + l.ns_all.at(rel->second.ns) + "." + rel->second.name, "",
                   r[1] + " START " + r[2] + " INCREMENT " + r[3] + " MINVALUE " + r[4] + " MAXVALUE " + r[5] + " CACHE " +
                       r[6] + (r[7] == "t" ? " CYCLE" : "")});
  }
}

void read_types(const Reads& reads, Lookups& l, std::vector<Object>& out,
                const std::map<std::string, std::vector<std::string>>& domain_checks) {
  auto types = reads[kTypes];
  if (types.empty()) return;
  std::map<std::string, std::string> labels;
  for (auto& r : reads[kEnums])
    labels[r[0]] += (labels[r[0]].empty() ? "" : ", ") + r[1];
  for (auto& r : types) {
    if (!l.ns_compared.count(r[1]) || l.member(kPgType, r[0])) continue;
    std::string def;
    if (r[3] == "e") {
      def = "ENUM (" + labels[r[0]] + ")";
    } else {
      def = "DOMAIN " + r[4] + (r[5] == "t" ? " NOT NULL" : "") + r[6];
      auto checks = domain_checks.find(r[0]);
      if (checks != domain_checks.end())
        for (const auto& c : checks->second) def += " " + c;
    }
    out.push_back({"type:" + l.ns_all[r[1]] + "." + r[2], "", def});
  }
}


}  // namespace

std::vector<Object> read_objects(shardio::RawConn& shard, std::chrono::milliseconds timeout) {
  auto reads = read_catalogs(shard, timeout);
  Lookups l;
  std::vector<Object> out;
  std::vector<std::size_t> pending;  // objects with a COLLATE clause to name
  std::map<std::string, std::string> index_options;
  std::map<std::string, std::vector<std::string>> domain_checks;
  read_schemas(reads, l, out);
  read_relations(reads, l, out, index_options);
  read_columns(reads, l, out, pending);
  auto constraint_indexes = read_constraints(reads, l, out, domain_checks);
  read_indexes(reads, l, out, pending, constraint_indexes, index_options);
  read_triggers(reads, l, out);
  read_functions(reads, l, out);
  read_sequences(reads, l, out);
  read_types(reads, l, out, domain_checks);
  resolve_collations(shard, timeout, l, out, pending);
  std::sort(out.begin(), out.end(), [](const Object& a, const Object& b) { return a.key < b.key; });
  return out;
}

std::vector<std::string> read_definitions(shardio::RawConn& shard, const std::vector<std::string>& oids,
                                          std::chrono::milliseconds timeout) {
  std::string list = "{";
  for (const auto& oid : oids) {
    if (list.size() > 1) list += ',';
    list += oid;
  }
  list += '}';
  begin_read(shard, timeout);
  auto rows = shard.query(
      "SELECT coalesce(pg_get_constraintdef(o.oid), '') FROM unnest($1::oid[]) WITH ORDINALITY AS o(oid, n) ORDER BY o.n",
      {list});
  shard.exec("ROLLBACK");
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (auto& r : rows) out.push_back(std::move(r[0]));
  return out;
}

}  // namespace shardctl::drift
