#include "archive/predicate.hpp"

#include <vector>

#include "archive/predicate_text.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "pg/sqlstate.hpp"
#include "shardio/row_checksum.hpp"

namespace shardctl::archive {
using catalog::quote_ident;
namespace {

constexpr const char* constraint_name = "shardctl_predicate";
constexpr const char* predicate_hint =
    "a predicate is one boolean expression over the root table's columns, e.g. \"created_at < now() - interval '400 days'\"";

// Every function the parsed expression (pg_constraint.conbin, as node text) can call: the
// functions it names, those behind its operators, the input and output functions of the types it
// converts between, and the same for the CHECK constraints of the domains it casts to. Node text
// escapes a space inside a name with a backslash, so ":funcid 12" never comes from a name. The
// volatile ones are returned by name.
constexpr const char* volatile_functions_sql = R"SQL(
WITH RECURSIVE trees(tree) AS (
  SELECT conbin::text FROM pg_constraint WHERE conrelid = $1::oid AND conname = $2
  UNION
  SELECT d.conbin::text FROM trees, regexp_matches(tree, ':[a-z_]*type(id)? (\d+)', 'gi') AS m
    JOIN pg_constraint d ON d.contypid = m[2]::oid AND d.contype = 'c'
), called(f) AS (
  SELECT m[1]::oid FROM trees, regexp_matches(tree, ':(?:funcid|opfuncid|hashfuncid|negfuncid|aggfnoid|winfnoid) (\d+)', 'g') AS m
  UNION
  SELECT o.oprcode::oid FROM trees, regexp_matches(tree, ':opno (\d+)', 'g') AS m JOIN pg_operator o ON o.oid = m[1]::oid
  UNION
  SELECT o.oprcode::oid FROM trees, regexp_matches(tree, ':opnos \(o([ 0-9]*)\)', 'g') AS m,
    unnest(string_to_array(btrim(m[1]), ' ')) AS n(opno) JOIN pg_operator o ON o.oid = n.opno::oid
  UNION
  SELECT unnest(ARRAY[t.typinput, t.typoutput])::oid FROM trees, regexp_matches(tree, ':[a-z_]*type(id)? (\d+)', 'gi') AS m
    JOIN pg_type t ON t.oid = m[2]::oid
)
SELECT p.oid::regprocedure::text FROM called JOIN pg_proc p ON p.oid = called.f WHERE p.provolatile = 'v' ORDER BY 1
)SQL";

std::string field(const PGresult* r, int code) {
  const char* v = PQresultErrorField(r, code);
  return v ? v : "";
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// The server's refusal of the CHECK constraint as a refusal of the predicate: what it says, in
// the predicate's words, and at which of the predicate's characters.
[[noreturn]] void refuse_parse(const PGresult* r, const std::string& shown, std::size_t prefix_chars,
                               const std::string& predicate) {
  std::string state = field(r, PG_DIAG_SQLSTATE);
  std::string msg = field(r, PG_DIAG_MESSAGE_PRIMARY);
  const std::string not_boolean = "argument of CHECK must be type boolean, not type ";
  if (msg.rfind(not_boolean, 0) == 0) msg = "its value is of type " + msg.substr(not_boolean.size()) + ", not boolean";
  if (msg == "cannot use subquery in check constraint")
    msg = "a subquery is not allowed (the predicate decides on the root table's row alone, never on another table)";
  msg = replace_all(msg, "in check constraints", "in an archive predicate");
  msg = replace_all(msg, "in check constraint", "in an archive predicate");
  std::string where;
  if (auto pos = field(r, PG_DIAG_STATEMENT_POSITION); !pos.empty()) {
    auto p = static_cast<std::size_t>(std::stoul(pos));
    auto length = characters_in(predicate, predicate.size());
    // Past the end: the server stumbled on the ")" after it (the text stops short).
    if (p > prefix_chars + length) {
      if (state == pg::sqlstate::syntax_error) msg = "syntax error at its end";
      else where = " (at its end)";
    } else if (p > prefix_chars) {
      where = " (at character " + std::to_string(p - prefix_chars) + ")";
    }
  }
  throw usage_error("the archive predicate is not a valid condition on " + shown + ": " + msg + where, predicate_hint);
}

// Whether a failed statement failed because of what it said (the predicate), not because of the
// server or the session (connection, resources, locks, conflicts, internal errors).
bool statement_fault(const std::string& state) {
  for (const char* cls : {"08", "40", "53", "55", "57", "58", "XX"})
    if (state.rfind(cls, 0) == 0) return false;
  return !state.empty();
}

}  // namespace

std::string checked_predicate(shardio::RawConn& shard, const std::string& schema, const std::string& table,
                              const std::string& shown, const std::string& predicate) {
  if (auto flaw = screen_predicate(predicate)) {
    if (flaw->character == 0) throw usage_error("the archive predicate (--where) is empty", predicate_hint);
    throw usage_error("the archive predicate is refused at character " + std::to_string(flaw->character) + ": " + flaw->what,
                      predicate_hint);
  }
  shard.script(shardio::session_settings);
  shard.exec(predicate_settings);
  std::string root = quote_ident(schema) + "." + quote_ident(table);
  if (shard.query("SELECT to_regclass($1) IS NOT NULL", {root})[0][0] != "t")
    throw usage_error("table " + shown + " does not exist on " + shard.role());
  std::string rendered;
  shardio::in_rolled_back_transaction(shard, [&] {
    // A copy named like the root, so a column may be qualified by the table's name.
    std::string probe = "pg_temp." + quote_ident(table);
    shard.exec("CREATE TEMPORARY TABLE " + quote_ident(table) + " (LIKE " + root + ")");
    std::string prefix = "ALTER TABLE " + probe + " ADD CONSTRAINT " + constraint_name + " CHECK (";
    std::string sql = prefix + predicate + ") NOT VALID";
    // The extended protocol: one statement, whatever the text holds.
    shardio::Result r(PQexecParams(shard.get(), sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      if (!statement_fault(field(r.get(), PG_DIAG_SQLSTATE))) shard.fail(r.get(), "checking the archive predicate");
      refuse_parse(r.get(), shown, characters_in(prefix, prefix.size()), predicate);
    }
    auto oid = shard.query("SELECT $1::regclass::oid::text", {probe})[0][0];
    auto constraints = shard.query("SELECT count(*) FROM pg_constraint WHERE conrelid = $1::oid", {oid})[0][0];
    if (constraints != "1")
      throw usage_error("the archive predicate is not one expression on " + shown, predicate_hint);
    std::vector<std::string> volatile_names;
    for (const auto& row : shard.query(volatile_functions_sql, {oid, constraint_name})) volatile_names.push_back(row[0]);
    if (!volatile_names.empty()) {
      std::string names;
      for (const auto& n : volatile_names) names += (names.empty() ? "" : ", ") + n;
      throw usage_error("the archive predicate calls volatile function" + std::string(volatile_names.size() > 1 ? "s " : " ") +
                            names,
                        "an archive predicate may call immutable and stable functions only: a volatile one may write, or "
                        "answer differently on each call, and even a dry run evaluates the predicate");
    }
    // Rendered with only pg_catalog on the search path: every other function, operator and type
    // comes schema-qualified, so the text means the same in any session.
    shard.exec("SET LOCAL search_path = pg_catalog");
    rendered = shard.query("SELECT pg_get_expr(conbin, conrelid) FROM pg_constraint WHERE conrelid = $1::oid", {oid})[0][0];
  });
  if (auto flaw = screen_predicate(rendered))
    throw internal_error("the server's rendering of the archive predicate on " + shard.role() + " is not one expression (" +
                         flaw->what + "): " + rendered);
  return rendered;
}

}  // namespace shardctl::archive
