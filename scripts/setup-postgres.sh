#!/usr/bin/env bash
# Idempotent set-up of the real database for integration tests and benchmarks:
#  1. start the installed PostgreSQL 15 cluster,
#  2. build and install pgvector 0.8.0 from Debian's source package when it is missing,
#  3. create the `groundwork` role and the `groundwork_test` database with the extension,
#  4. give the server a buffer cache of a quarter of RAM (at most 2 GB) for the benchmark.
# Every step checks first and skips what is already done, so CI and contributors run the same thing.
# Needs root (or sudo) for apt and the cluster; safe to run again.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PGVECTOR_VERSION="0.8.0"
DB_USER="${GROUNDWORK_PG_USER:-groundwork}"
DB_PASS="${GROUNDWORK_PG_PASSWORD:-groundwork}"
DB_NAME="${GROUNDWORK_PG_DB:-groundwork_test}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

log() { echo "[setup-postgres] $*"; }

apt_updated=0
apt_update_once() {
  if [ "$apt_updated" = 0 ]; then
    $SUDO apt-get update -qq
    apt_updated=1
  fi
}

# 1. PostgreSQL server installed and running.
if ! command -v pg_ctlcluster >/dev/null || [ ! -d "/usr/lib/postgresql/${PG_MAJOR}/bin" ]; then
  log "installing postgresql-${PG_MAJOR}"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "postgresql-${PG_MAJOR}" >/dev/null
fi
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^${PG_MAJOR} main$"; then
  log "creating cluster ${PG_MAJOR}/main"
  $SUDO pg_createcluster "${PG_MAJOR}" main
fi
# 2. pgvector, built from Debian's source package (it is not packaged for bookworm).
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
SHAREDIR="$("$PG_CONFIG" --sharedir 2>/dev/null || echo "/usr/share/postgresql/${PG_MAJOR}")"
if [ ! -f "${SHAREDIR}/extension/vector--${PGVECTOR_VERSION}.sql" ]; then
  log "building pgvector ${PGVECTOR_VERSION}"
  if [ ! -x "$PG_CONFIG" ] || [ ! -d "/usr/include/postgresql/${PG_MAJOR}/server" ]; then
    apt_update_once
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "postgresql-server-dev-${PG_MAJOR}" make gcc >/dev/null
    if pg_lsclusters -h | awk '$1=="'"${PG_MAJOR}"'" && $2=="main" {print $4}' | grep -q online; then restart_needed=1; fi
  fi
  work="$(mktemp -d)"
  mkdir -p "$work/lists/partial"
  echo "deb-src http://deb.debian.org/debian trixie main" >"$work/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null" -o "Dir::State::Lists=$work/lists")
  $SUDO apt-get "${APT_OPTS[@]}" update -qq
  (cd "$work" && $SUDO apt-get "${APT_OPTS[@]}" source --download-only pgvector >/dev/null)
  tarball="$(ls "$work"/pgvector_${PGVECTOR_VERSION}*.orig.tar.* | head -1)"
  mkdir -p "$work/src"
  tar -xf "$tarball" -C "$work/src" --strip-components=1
  (cd "$work/src" && make -s PG_CONFIG="$PG_CONFIG" >/dev/null && $SUDO make -s install PG_CONFIG="$PG_CONFIG" >/dev/null)
  $SUDO rm -rf "$work"
  log "pgvector ${PGVECTOR_VERSION} installed"
fi

# Start the cluster only now: installing the server-dev package can upgrade the server's own
# libraries, and a server started before that would fail to load them (e.g. plpgsql.so).
if [ "${restart_needed:-0}" = 1 ]; then
  log "restarting cluster ${PG_MAJOR}/main after a package upgrade"
  $SUDO pg_ctlcluster "${PG_MAJOR}" main restart
fi
if ! pg_lsclusters -h | awk '$1=="'"${PG_MAJOR}"'" && $2=="main" {print $4}' | grep -q online; then
  log "starting cluster ${PG_MAJOR}/main"
  $SUDO pg_ctlcluster "${PG_MAJOR}" main start
fi


# 3. Role, database and extension.
psql_admin() { $SUDO -u postgres psql -v ON_ERROR_STOP=1 -qtA "$@"; }
if [ -z "$SUDO" ]; then psql_admin() { su postgres -c "psql -v ON_ERROR_STOP=1 -qtA $(printf '%q ' "$@")"; }; fi
# A server started before a package upgrade cannot load the upgraded libraries: restart it.
if ! psql_admin -c 'DO $$ BEGIN END $$' >/dev/null 2>&1; then
  log "the running server cannot load its libraries (upgraded underneath it); restarting"
  $SUDO pg_ctlcluster "${PG_MAJOR}" main restart
fi
if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '${DB_USER}'")" != "1" ]; then
  log "creating role ${DB_USER}"
  psql_admin -c "CREATE ROLE ${DB_USER} LOGIN PASSWORD '${DB_PASS}' CREATEDB"
fi
# CREATEROLE, as Aurora's owner role has: the tests create the application's least-privilege
# role (lambdas/adapters/postgres/app-role.ts) and drop it again.
psql_admin -c "ALTER ROLE ${DB_USER} CREATEROLE"
for db in "${DB_NAME}" groundwork_bench; do
  if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '${db}'")" != "1" ]; then
    log "creating database ${db}"
    psql_admin -c "CREATE DATABASE ${db} OWNER ${DB_USER}"
  fi
  # The extension is created by a superuser so that the application role needs no superuser rights.
  psql_admin -d "${db}" -c "CREATE EXTENSION IF NOT EXISTS vector"
done
# The benchmark loads its tables into the buffer cache before timing searches (bench/search.ts).
psql_admin -d groundwork_bench -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm"

# 4. A buffer cache that can hold the search benchmark's working set (about 1.2 GB at 100k chunks).
# PostgreSQL's default, 128 MB, is meant for the smallest machines; the usual advice, and what
# Aurora does, is a large share of memory. A quarter of RAM, from 128 MB to 2 GB, or
# GROUNDWORK_PG_SHARED_BUFFERS_MB; only ever raised, with a restart when it changes.
mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
want_mb="${GROUNDWORK_PG_SHARED_BUFFERS_MB:-$((mem_mb / 4))}"
if [ "$want_mb" -gt 2048 ] && [ -z "${GROUNDWORK_PG_SHARED_BUFFERS_MB:-}" ]; then want_mb=2048; fi
if [ "$want_mb" -lt 128 ]; then want_mb=128; fi
have_mb=$(psql_admin -c "SELECT pg_size_bytes(current_setting('shared_buffers')) / 1048576")
# A cache of 4 GB or more (the 1M-chunk benchmark asks for 14 GB) is mapped in 2 MB huge pages,
# as Aurora and most production servers map it: in 4 KB pages every connection faults the pages
# it touches into its own page table. PostgreSQL's default (huge_pages = try) uses them when the
# kernel has them reserved; reserving them needs root, and memory in one piece, so the page cache
# is dropped and memory compacted first. Without root the cache uses ordinary pages.
restart=false
if [ "$have_mb" -lt "$want_mb" ]; then
  log "raising shared_buffers from ${have_mb} MB to ${want_mb} MB (restarts the cluster)"
  psql_admin -c "ALTER SYSTEM SET shared_buffers = '${want_mb}MB'"
  restart=true
fi
if [ "$want_mb" -ge 4096 ] && [ -w /proc/sys/vm/nr_hugepages ]; then
  # The cache, plus PostgreSQL's other shared memory (a few per cent), in 2 MB pages.
  need_pages=$(( (want_mb * 105 / 100 + 64) / 2 ))
  have_pages=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
  if [ "$have_pages" -lt "$need_pages" ]; then
    $SUDO pg_ctlcluster "${PG_MAJOR}" main stop
    sync
    echo 3 > /proc/sys/vm/drop_caches
    echo 1 > /proc/sys/vm/compact_memory 2>/dev/null || true
    echo "$need_pages" > /proc/sys/vm/nr_hugepages
    got_pages=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
    log "reserved ${got_pages} of ${need_pages} huge pages (2 MB) for shared_buffers"
    restart=true
  fi
fi
if [ "$restart" = true ]; then
  # Started again if the huge pages' reservation stopped it, restarted otherwise.
  if $SUDO pg_ctlcluster "${PG_MAJOR}" main status > /dev/null 2>&1; then
    $SUDO pg_ctlcluster "${PG_MAJOR}" main restart
  else
    $SUDO pg_ctlcluster "${PG_MAJOR}" main start
  fi
fi
log "ready: postgres://${DB_USER}:***@localhost:5432/${DB_NAME} (pgvector $(psql_admin -d "${DB_NAME}" -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'"))"
