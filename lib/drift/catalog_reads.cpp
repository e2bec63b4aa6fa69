#include "drift/catalog_reads.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "core/error.hpp"
#include "drift/fingerprint.hpp"
#include "shardside/names.hpp"

namespace shardctl::drift {

namespace {

// The SQL of each read, in Read order (read_sql checks it). The triggers read also leaves out
// the guard triggers shardctl puts on moving tables (guard_exclusion).
struct ReadSql {
  Read read;
  std::string_view sql;
};
constexpr ReadSql kReadSql[] = {
    {kNamespaces, "SELECT oid, quote_ident(nspname), nspname FROM pg_namespace"},
    {kExtensions, "SELECT quote_ident(extname), extversion, extnamespace FROM pg_extension"},
    {kMembers, "SELECT classid, objid FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'"},
    {kRelations,
     "SELECT c.oid, c.relnamespace, quote_ident(c.relname), c.relkind, c.relpersistence, c.relispartition, "
     "c.relrowsecurity, CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END, "
     "CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END, "
     "CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END, "
     "CASE WHEN c.relkind IN ('i', 'I') THEN coalesce(' WITH (' || array_to_string(c.reloptions, ', ') || ')', '') END, c.relam "
     "FROM pg_class c WHERE c.oid >= 16384 AND c.relkind IN ('r', 'p', 'f', 'v', 'm', 'i', 'I', 'S')"},
    {kInherits, "SELECT inhrelid, inhparent FROM pg_inherits WHERE inhrelid >= 16384 ORDER BY inhseqno"},
    {kTypeCollations, "SELECT oid, typcollation FROM pg_type WHERE typcollation <> 0"},
    {kDefaults,
     "SELECT d.adrelid, d.adnum, CASE WHEN a.attgenerated = 's' THEN ' GENERATED ALWAYS AS (' || "
     "pg_get_expr(d.adbin, d.adrelid) || ') STORED' ELSE ' DEFAULT ' || pg_get_expr(d.adbin, 0) END "
     "FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid >= 16384"},
    {kAttributes,
     "SELECT attrelid, attnum, quote_ident(attname), format_type(atttypid, atttypmod), atttypid, "
     "attcollation, attnotnull, attidentity FROM pg_attribute "
     "WHERE attrelid >= 16384 AND attnum > 0 AND NOT attisdropped"},
    {kConstraints,
     "SELECT oid, conrelid, contypid, quote_ident(conname), contype, conindid, "
     "CASE WHEN contype = 'c' AND conrelid <> 0 THEN 'CHECK tree md5 ' || "
     "md5(regexp_replace(conbin::text, ' :location -?[0-9]+', '', 'g')) || "
     "CASE WHEN connoinherit THEN ' NO INHERIT' ELSE '' END || CASE WHEN NOT convalidated THEN ' NOT VALID' ELSE '' END "
     "ELSE pg_get_constraintdef(oid) END "
     "FROM pg_constraint WHERE conrelid >= 16384 OR contypid >= 16384 ORDER BY conname"},
    {kAccessMethods, "SELECT oid, quote_ident(amname) FROM pg_am"},
    {kOperatorClasses, "SELECT oid, opcnamespace, quote_ident(opcname) FROM pg_opclass WHERE NOT opcdefault"},
    {kIndexes,
     "SELECT indexrelid, indrelid, indisunique, indisvalid, indnkeyatts, indkey, indcollation, indclass, indoption, "
     "indnullsnotdistinct, CASE WHEN indexprs IS NOT NULL OR indpred IS NOT NULL THEN pg_get_indexdef(indexrelid) END "
     "FROM pg_index WHERE indrelid >= 16384"},
    {kTriggers,
     "SELECT tgrelid, quote_ident(tgname), pg_get_triggerdef(oid), tgenabled FROM pg_trigger "
     "WHERE tgrelid >= 16384 AND NOT tgisinternal"},
    {kLanguages, "SELECT oid, quote_ident(lanname) FROM pg_language"},
    {kFunctions,
     "SELECT oid, pronamespace, prokind, quote_ident(proname), pg_get_function_identity_arguments(oid), "
     "CASE WHEN prokind IN ('f', 'w') THEN pg_get_function_result(oid) END, prolang, provolatile, proisstrict, "
     "prosecdef, coalesce('SET ' || array_to_string(proconfig, ', '), ''), "
     "md5(coalesce(prosrc, '') || coalesce(probin, '')) FROM pg_proc WHERE oid >= 16384"},
    {kSequences,
     "SELECT seqrelid, format_type(seqtypid, NULL), seqstart, seqincrement, seqmin, seqmax, seqcache, "
     "seqcycle FROM pg_sequence WHERE seqrelid >= 16384"},
    {kTypes,
     "SELECT oid, typnamespace, quote_ident(typname), typtype, format_type(typbasetype, typtypmod), typnotnull, "
     "coalesce(' DEFAULT ' || typdefault, '') FROM pg_type WHERE oid >= 16384 AND typtype IN ('e', 'd')"},
    {kEnums,
     "SELECT enumtypid, quote_literal(enumlabel) FROM pg_enum WHERE enumtypid >= 16384 "
     "ORDER BY enumtypid, enumsortorder"},
};

constexpr bool in_read_order() {
  if (std::size(kReadSql) != kReadCount) return false;
  for (std::size_t r = 0; r < kReadCount; ++r)
    if (kReadSql[r].read != r) return false;
  return true;
}
static_assert(in_read_order(), "kReadSql has one row per Read, in Read order");

// " AND NOT (tgname = ANY ('{shardctl_guard_row,...}'::name[]))"
std::string guard_exclusion() {
  std::string guards = "'{";
  for (const char* name : shardside::own_triggers) {
    if (guards.size() > 2) guards += ',';
    guards += name;
  }
  guards += "}'::name[]";
  return " AND NOT (tgname = ANY (" + guards + "))";
}

std::string read_sql(Read read) {
  if (read >= kReadCount) throw internal_error("no such catalog read");
  std::string sql(kReadSql[read].sql);
  if (read == kTriggers) sql += guard_exclusion();
  return sql;
}

std::string begin_read_sql(shardio::RawConn& shard, std::chrono::milliseconds timeout) {
  return "BEGIN READ ONLY; SET LOCAL search_path TO pg_catalog; SET LOCAL statement_timeout = " +
         shard.literal(std::to_string(std::max<std::int64_t>(1, timeout.count())) + "ms") + ";\n";
}

}  // namespace

void begin_read(shardio::RawConn& shard, std::chrono::milliseconds timeout) { shard.script(begin_read_sql(shard, timeout)); }

Reads read_catalogs(shardio::RawConn& shard, std::chrono::milliseconds timeout) {
  std::string script = begin_read_sql(shard, timeout);
  for (std::size_t r = 0; r < kReadCount; ++r) script += read_sql(static_cast<Read>(r)) + ";\n";
  script += "ROLLBACK";
  auto reads = shard.query_each(script);
  if (reads.size() != kReadCount) throw internal_error("a shard's catalog reads returned " + std::to_string(reads.size()) + " results");
  return reads;
}

}  // namespace shardctl::drift
