// lib/export/pgbouncer: a shard DSN as PgBouncer 1.18's [databases] entry, exactly or not at all
// (man/shardctl-export.1). t_export_pgbouncer.sh proves the text against a real PgBouncer.
#include <doctest/doctest.h>

#include <sstream>

#include "core/error.hpp"
#include "export/pgbouncer.hpp"

using namespace shardctl;
using exporter::pgbouncer_entry;

namespace {

std::string bouncer_line(const std::string& shard, const std::string& dsn, const std::optional<std::string>& mode = std::nullopt) {
  auto r = pgbouncer_entry(shard, dsn, mode);
  REQUIRE(r.entry);
  exporter::BouncerDocument doc{"host=c dbname=cat", "2026-01-01T00:00:00Z", std::nullopt, {*r.entry}, std::nullopt};
  auto text = exporter::render_pgbouncer(doc);
  auto at = text.find("[databases]\n");
  REQUIRE(at != std::string::npos);
  auto line = text.substr(at + 12);
  return line.substr(0, line.find('\n'));
}

std::string refusal_of(const std::string& shard, const std::string& dsn) {
  auto r = pgbouncer_entry(shard, dsn);
  REQUIRE(r.refusal);
  CHECK_FALSE(r.entry);
  return r.refusal->reason;
}

}  // namespace

TEST_CASE("key=value and URI DSNs give the same entry") {
  CHECK(bouncer_line("shard_1", "host=db1 port=5433 dbname=app user=svc") == "shard_1 = host=db1 port=5433 dbname=app user=svc");
  CHECK(bouncer_line("shard_1", "postgresql://svc@db1:5433/app") == "shard_1 = host=db1 port=5433 dbname=app user=svc");
  CHECK(bouncer_line("s-2.eu", "dbname=app host=/var/run/postgresql") == "s-2.eu = host=/var/run/postgresql dbname=app");
  CHECK(bouncer_line("s", "postgresql://%2Ftmp%2Fsock/app") == "s = host=/tmp/sock dbname=app");
  CHECK(bouncer_line("s", "host=db dbname=app client_encoding=UTF8 application_name=shop", "transaction") ==
        "s = host=db dbname=app client_encoding=UTF8 application_name=shop pool_mode=transaction");
}

TEST_CASE("values with spaces or quotes are quoted as PgBouncer's parser reads them") {
  CHECK(exporter::bouncer_value("plain") == "plain");
  CHECK(exporter::bouncer_value("my db") == "'my db'");
  CHECK(exporter::bouncer_value("it's") == "'it''s'");
  CHECK(exporter::bouncer_value("tab\there") == "'tab\there'");
  CHECK(bouncer_line("s", "host=db dbname='my o\\'db'") == "s = host=db dbname='my o''db'");
  CHECK(bouncer_line("s", "host=db dbname='a\\'b c'") == "s = host=db dbname='a''b c'");
}

TEST_CASE("options PgBouncer cannot express per database are refused, naming the option") {
  for (const char* opt : {"sslmode=require", "sslrootcert=/x.pem", "options='-c statement_timeout=5'", "target_session_attrs=read-write",
                          "connect_timeout=3", "hostaddr=10.0.0.1", "service=foo", "passfile=/p", "gssencmode=disable",
                          "keepalives=1"}) {
    std::string dsn = std::string("host=db dbname=app ") + opt;
    std::string key = std::string(opt).substr(0, std::string(opt).find('='));
    auto reason = refusal_of("s", dsn);
    CHECK_MESSAGE(reason.find(key) != std::string::npos, dsn << " -> " << reason);
  }
  CHECK(refusal_of("s", "postgresql://db/app?sslmode=verify-full").find("sslmode") != std::string::npos);
  CHECK(refusal_of("s", "host=a,b dbname=app").find("several hosts") != std::string::npos);
  CHECK(refusal_of("s", "host=a port=1,2 dbname=app").find("several ports") != std::string::npos);
  CHECK(refusal_of("s", "dbname=app").find("no host") != std::string::npos);
  CHECK(refusal_of("s", "host=db").find("no dbname") != std::string::npos);
  CHECK(refusal_of("s", "host=db dbname='host=x dbname=y'").find("connection string") != std::string::npos);
  CHECK(refusal_of("s", "host=db dbname=app client_encoding=auto").find("client_encoding") != std::string::npos);
  CHECK(refusal_of("pgbouncer", "host=db dbname=app").find("admin console") != std::string::npos);
  CHECK(refusal_of("s", "host=db dbname='a\nb'").find("line break") != std::string::npos);
}

TEST_CASE("one refused shard refuses the export, naming every refused shard") {
  std::vector<exporter::ShardDsn> shards{{"a", "host=db dbname=a"}, {"b", "host=db dbname=b sslmode=require"},
                                         {"c", "host=db dbname=c target_session_attrs=any"}};
  try {
    exporter::pgbouncer_entries(shards);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
    std::string m = e.what();
    CHECK(m.find("shard b: its DSN sets sslmode") != std::string::npos);
    CHECK(m.find("shard c: its DSN sets target_session_attrs") != std::string::npos);
    CHECK(m.find("shard a") == std::string::npos);
  }
  CHECK(exporter::pgbouncer_entries({{"a", "host=db dbname=a"}}).size() == 1);
}

TEST_CASE("--listen and the shard set lines") {
  auto l = exporter::parse_listen("bouncer.internal:6432");
  CHECK(l.host == "bouncer.internal");
  CHECK(l.port == 6432);
  CHECK(exporter::parse_listen("[::1]:6432").host == "::1");
  for (const char* bad : {"bouncer", ":6432", "b:0", "b:70000", "b:x", "b c:1"}) CHECK_THROWS_AS(exporter::parse_listen(bad), Error);
  auto entry = *pgbouncer_entry("shard_1", "host=db dbname=app").entry;
  exporter::BouncerDocument doc{"host=c dbname=cat", "2026-01-01T00:00:00Z", std::string("customers"), {entry}, l};
  auto text = exporter::render_pgbouncer(doc);
  CHECK(text.find("; shardctl shard set shard_1 --app-dsn 'host=bouncer.internal port=6432 dbname=shard_1'\n") != std::string::npos);
  CHECK(text.find("map customers") != std::string::npos);
  doc.listen.reset();
  CHECK(exporter::render_pgbouncer(doc).find("--app-dsn") == std::string::npos);
  // Every line but the entries and the section is a comment PgBouncer's ini reader skips.
  std::istringstream lines(exporter::render_pgbouncer(doc));
  for (std::string line; std::getline(lines, line);)
    CHECK((line.empty() || line[0] == ';' || line == "[databases]" || line.starts_with("shard_1 = ")));
  CHECK(exporter::shell_word("it's") == "'it'\\''s'");
}
