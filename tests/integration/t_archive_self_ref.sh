# archive run on tables whose foreign keys point back into the archived set: a self-referencing
# root (a task tree, ON DELETE CASCADE) and a cascade whose child references itself and its
# parent table references the child back (a cycle). Without --cascade, a cold row another row
# still references stays (the database would otherwise cascade the delete to a row that is not
# cold, or refuse the batch); with --cascade, a foreign key that the cascade cannot follow once
# is refused before anything changes (64). Every row not archived is unchanged.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet archself
zoo_all_shards <<'SQL'
create table public.tasks (id int primary key, parent_id int references public.tasks on delete cascade,
                           closed date);
-- 1 (cold) <- 2 (cold) <- 3 (hot); 4 (cold) <- 5 (cold); 6 (cold, alone); 7 (cold, references itself only)
insert into public.tasks values (1, null, '2020-01-01'), (2, 1, '2020-01-02'), (3, 2, null),
                                (4, null, '2020-01-01'), (5, 4, '2020-01-03'), (6, null, '2020-02-01'),
                                (7, 7, '2020-02-02');
create table public.projects (id int primary key, lead_note int, closed date);
create table public.notes (id int primary key, project_id int not null references public.projects on delete cascade,
                           reply_to int references public.notes on delete cascade);
alter table public.projects add foreign key (lead_note) references public.notes on delete set null;
insert into public.projects values (1, null, '2020-01-01'), (2, null, null);
insert into public.notes values (10, 1, null), (11, 2, 10), (12, 2, null);
update public.projects set lead_note = 12 where id = 1;
SQL
snapshot() {
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    psql_shard "$i" -XAtc "select 'task', t::text from public.tasks t union all select 'project', p::text from public.projects p
                           union all select 'note', n::text from public.notes n order by 1, 2"
  done
}
dest="$TEST_TMP/archive"

# --- without --cascade: referenced cold rows stay --------------------------------------------
before=$(snapshot)
expect_exit 0 shardctl archive run --table tasks --where "closed is not null" --to "dir:$dest" --format json
# Archived: 5, 6 (cold, unreferenced) and 7 (referenced only by itself). Kept: 1, 2, 4 (referenced
# by another row) and 3 (hot).
for ((i = 1; i <= ZOO_SHARDS; i++)); do
  assert_eq "$(psql_shard "$i" -XAtc "select string_agg(id::text, ',' order by id) from public.tasks")" "1,2,3,4"
done
assert_eq "$(jq '[.shards[].rows["public.tasks"] // 0] | add' "$STDOUT")" "$((3 * ZOO_SHARDS))"
# The next run takes 4, whose only referencer (5) is gone; the chain 1 <- 2 <- 3 stays, 3 is hot.
expect_exit 0 shardctl archive run --table tasks --where "closed is not null" --to "dir:$dest" --format json
for ((i = 1; i <= ZOO_SHARDS; i++)); do
  assert_eq "$(psql_shard "$i" -XAtc "select string_agg(id::text, ',' order by id) from public.tasks")" "1,2,3"
done

# --- with --cascade: a self reference or a cycle is refused, nothing changes ------------------
before=$(snapshot)
expect_exit 64 shardctl archive run --table tasks --where "closed is not null" --to "dir:$dest" --cascade
expect_stderr_contains "public.tasks"
expect_stderr_contains "references its own table"
expect_exit 64 shardctl archive run --table projects --where "closed is not null" --to "dir:$dest" --cascade
expect_stderr_contains "public.notes"
expect_exit 64 shardctl archive run --table projects --where "closed is not null" --to "dir:$dest" --cascade --dry-run
assert_eq "$(snapshot)" "$before"

# --- the cycle without --cascade: project 1 is referenced by notes 10, so it stays ----------
expect_exit 0 shardctl archive run --table projects --where "closed is not null" --to "dir:$dest"
assert_eq "$(snapshot)" "$before"
pass
