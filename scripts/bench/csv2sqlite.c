/*
 * csv2sqlite: a hand-written CSV loader for SQLite, the physical anchor of scripts/bench.sh.
 *
 *   cc -O2 -o csv2sqlite scripts/bench/csv2sqlite.c -lsqlite3
 *   csv2sqlite DB CSV TABLE      (the table exists; the CSV has a header row, which is skipped)
 *
 * What a careful C programmer would write for one known file and table: the file read in
 * 1 MiB blocks, fields split by a byte loop that handles RFC 4180 quotes (quoted fields with
 * commas, doubled quotes and line breaks), every field of a record bound straight from the
 * read buffer into one prepared INSERT (sqlite3_bind_text with SQLITE_STATIC, or
 * sqlite3_bind_int64 / sqlite3_bind_double for a column whose declared type has INTEGER or
 * REAL affinity and a field that is such a number; anything else is bound as text, which is
 * what SQLite's affinity would keep), one transaction, journal_mode=OFF, synchronous=OFF, and
 * SQLite's memory statistics off (SQLITE_CONFIG_MEMSTATUS), as ferry runs it.
 * No validation beyond the field count: it is the cost of parsing and inserting, nothing more.
 * See docs/benchmarks.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#define BLOCK (1 << 20)
#define MAX_COLUMNS 256

enum affinity { AFF_TEXT, AFF_INTEGER, AFF_REAL };

static void die(const char *what, sqlite3 *db) {
    fprintf(stderr, "csv2sqlite: %s%s%s\n", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql) {
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
        fprintf(stderr, "csv2sqlite: %s: %s\n", sql, message ? message : "?");
        exit(1);
    }
}

/* SQLite's affinity rules (https://sqlite.org/datatype3.html, 3.1), in their order. */
static enum affinity affinity_of(const char *declared) {
    if (declared == NULL) return AFF_TEXT;
    char upper[128];
    size_t n = strlen(declared);
    if (n >= sizeof upper) n = sizeof upper - 1;
    for (size_t i = 0; i < n; i++) upper[i] = (char)(declared[i] >= 'a' && declared[i] <= 'z' ? declared[i] - 32 : declared[i]);
    upper[n] = 0;
    if (strstr(upper, "INT")) return AFF_INTEGER;
    if (strstr(upper, "CHAR") || strstr(upper, "CLOB") || strstr(upper, "TEXT")) return AFF_TEXT;
    if (strstr(upper, "BLOB") || n == 0) return AFF_TEXT;
    if (strstr(upper, "REAL") || strstr(upper, "FLOA") || strstr(upper, "DOUB")) return AFF_REAL;
    return AFF_TEXT; /* NUMERIC: the benchmark's tables have none */
}

/* A whole field that is a decimal integer of at most 18 digits (no overflow possible). */
static int parse_int(const char *s, size_t n, sqlite3_int64 *out) {
    size_t i = 0;
    int negative = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) { negative = s[0] == '-'; i = 1; }
    if (i == n || n - i > 18) return 0;
    sqlite3_int64 value = 0;
    for (; i < n; i++) {
        unsigned digit = (unsigned char)s[i] - '0';
        if (digit > 9) return 0;
        value = value * 10 + digit;
    }
    *out = negative ? -value : value;
    return 1;
}

static int parse_real(const char *s, size_t n, double *out) {
    char copy[64];
    if (n == 0 || n >= sizeof copy) return 0;
    memcpy(copy, s, n);
    copy[n] = 0;
    char *end;
    errno = 0;
    *out = strtod(copy, &end);
    return end == copy + n && errno == 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: csv2sqlite DB CSV TABLE\n");
        return 2;
    }
    FILE *file = fopen(argv[2], "rb");
    if (!file) { perror(argv[2]); return 1; }
    /* SQLite's memory statistics off, as ferry sets them: otherwise a global mutex is taken
     * around each of its allocations (about a tenth of this loader's instructions). */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3 *db;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) die("cannot open the database", db);
    exec(db, "PRAGMA journal_mode=OFF");
    exec(db, "PRAGMA synchronous=OFF");

    /* The table's columns and their affinities. */
    enum affinity affinity[MAX_COLUMNS];
    int columns = 0;
    sqlite3_stmt *info;
    char *sql = sqlite3_mprintf("SELECT type FROM pragma_table_info(%Q) ORDER BY cid", argv[3]);
    if (sqlite3_prepare_v2(db, sql, -1, &info, NULL) != SQLITE_OK) die("cannot read the table", db);
    sqlite3_free(sql);
    while (sqlite3_step(info) == SQLITE_ROW && columns < MAX_COLUMNS)
        affinity[columns++] = affinity_of((const char *)sqlite3_column_text(info, 0));
    sqlite3_finalize(info);
    if (columns == 0) die("no such table", NULL);

    /* INSERT INTO "table" VALUES (?, ?, ...) */
    size_t sql_size = strlen(argv[3]) * 2 + 32 + (size_t)columns * 3;
    char *insert = malloc(sql_size);
    char *w = insert + sprintf(insert, "INSERT INTO \"");
    for (const char *c = argv[3]; *c; c++) { if (*c == '"') *w++ = '"'; *w++ = *c; }
    w += sprintf(w, "\" VALUES (");
    for (int i = 0; i < columns; i++) w += sprintf(w, i ? ",?" : "?");
    sprintf(w, ")");
    sqlite3_stmt *stmt;
    if (sqlite3_prepare_v2(db, insert, -1, &stmt, NULL) != SQLITE_OK) die("cannot prepare the INSERT", db);
    free(insert);
    exec(db, "BEGIN");

    size_t capacity = 2 * BLOCK;
    char *buffer = malloc(capacity);
    size_t start = 0, end = 0; /* the unparsed bytes: buffer[start, end) */
    int eof = 0;
    long long line = 1, rows = 0;
    int header = 1;
    char *field_start[MAX_COLUMNS];
    size_t field_length[MAX_COLUMNS];
    unsigned char field_escaped[MAX_COLUMNS]; /* 0 unquoted, 1 quoted, 2 quoted with "" */

    for (;;) {
        /* Parse one record from buffer + start; on running out of bytes, read a block and retry. */
        char *p = buffer + start, *limit = buffer + end;
        int fields = 0, complete = 0;
        long long newlines = 0;
        if (p == limit && eof) break;
        while (p < limit) {
            if (fields == MAX_COLUMNS) { fprintf(stderr, "csv2sqlite: line %lld: too many fields\n", line); return 1; }
            char *f = p;
            if (*p == '"') {
                int escaped = 0, closed = 0;
                p++;
                while (p < limit) {
                    char c = *p;
                    if (c == '"') {
                        if (p + 1 == limit) break;          /* is it "" or the end? read more */
                        if (p[1] == '"') { escaped = 1; p += 2; continue; }
                        closed = 1;
                        break;
                    }
                    if (c == '\n') newlines++;
                    p++;
                }
                if (!closed) { if (eof && p + 1 == limit) { closed = 1; } else break; }
                field_start[fields] = f + 1;
                field_length[fields] = (size_t)(p - f - 1);
                field_escaped[fields] = (unsigned char)(escaped ? 2 : 1); /* quoted, with "" */
                fields++;
                p++;                                        /* past the closing quote */
            } else {
                while (p < limit && *p != ',' && *p != '\n' && *p != '\r') p++;
                if (p == limit && !eof) break;
                field_start[fields] = f;
                field_length[fields] = (size_t)(p - f);
                field_escaped[fields] = 0;
                fields++;
            }
            if (p == limit) { if (eof) complete = 1; break; }
            if (*p == ',') { p++; if (p == limit && eof) { field_start[fields] = p; field_length[fields] = 0; field_escaped[fields++] = 0; complete = 1; } continue; }
            if (*p == '\r') { if (p + 1 == limit && !eof) break; p++; if (p < limit && *p == '\n') p++; complete = 1; break; }
            if (*p == '\n') { p++; complete = 1; break; }
            fprintf(stderr, "csv2sqlite: line %lld: a character after a closing quote\n", line);
            return 1;
        }
        if (!complete) {
            if (eof) { if (p == limit) break; fprintf(stderr, "csv2sqlite: line %lld: incomplete record\n", line); return 1; }
            /* Keep the partial record, read the next block behind it. */
            size_t kept = end - start;
            memmove(buffer, buffer + start, kept);
            start = 0;
            end = kept;
            if (capacity - end < BLOCK) { capacity *= 2; buffer = realloc(buffer, capacity); if (!buffer) die("out of memory", NULL); }
            size_t got = fread(buffer + end, 1, BLOCK, file);
            if (got == 0) { if (ferror(file)) die("read error", NULL); eof = 1; }
            end += got;
            continue;
        }
        start = (size_t)(p - buffer);
        line += 1 + newlines;
        if (header) { header = 0; continue; }
        if (fields == 1 && field_length[0] == 0 && field_escaped[0] == 0) continue; /* a blank line */
        if (fields != columns) {
            fprintf(stderr, "csv2sqlite: line %lld: %d fields, the table has %d columns\n", line - 1 - newlines, fields, columns);
            return 1;
        }
        for (int i = 0; i < fields; i++) {
            char *s = field_start[i];
            size_t n = field_length[i];
            if (field_escaped[i] == 2) {                /* "" -> " in place */
                size_t r = 0, o = 0;
                while (r < n) { s[o++] = s[r]; r += s[r] == '"' ? 2 : 1; }
                n = o;
            }
            sqlite3_int64 integer;
            double real;
            if (affinity[i] == AFF_INTEGER && parse_int(s, n, &integer))
                sqlite3_bind_int64(stmt, i + 1, integer);
            else if (affinity[i] == AFF_REAL && parse_real(s, n, &real))
                sqlite3_bind_double(stmt, i + 1, real);
            else
                sqlite3_bind_text(stmt, i + 1, s, (int)n, SQLITE_STATIC);
        }
        if (sqlite3_step(stmt) != SQLITE_DONE) {
            fprintf(stderr, "csv2sqlite: line %lld: ", line - 1 - newlines);
            die("INSERT failed", db);
        }
        sqlite3_reset(stmt);
        rows++;
    }
    exec(db, "COMMIT");
    sqlite3_finalize(stmt);
    if (sqlite3_close(db) != SQLITE_OK) die("cannot close the database", db);
    fclose(file);
    free(buffer);
    fprintf(stderr, "csv2sqlite: %lld rows into %s\n", rows, argv[3]);
    return 0;
}
