/* The tool table: one row per tool (see tools.h for what a row holds and
 * how to add a tool or a parameter). Defaults and limits the backend has
 * come from its macros (include/ocisbx/backend.h); the ones that are the
 * harness's own are written here, once. */
#include "harness/call.h"
#include "harness/tools.h"
#include "ocisbx/backend.h"

/* A row's parameter list, ended by the {NULL} row. */
#define PARAMS(...) ((const harness_param[]){__VA_ARGS__, {0}})
/* Bounds (integer: the value; string: the length; list: the items). */
#define MIN(v) .has_min = true, .min = (v)
#define MAX(v) .has_max = true, .max = (v)
/* The schema's default, filled in when the argument is absent. */
#define DEFAULT(v) .has_default = true, .def_num = (v)
#define CHOICES(...) .choices = ((const char *const[]){__VA_ARGS__, NULL})
#define REQUIRED .required = true
#define STR_(x) #x
#define STR(x) STR_(x)
#define LINE_MAX_TEXT STR(OCISBX_BACKEND_LINE_MAX)

/* exec's yield_ms and job's wait_ms: the longest (10 minutes), and wait's default. */
#define JOB_WAIT_MAX_MS 600000
#define JOB_WAIT_DEFAULT_MS 30000
/* The most edits one edit call takes. */
#define EDITS_MAX 1000

static const harness_param EDIT_ITEMS[] = {
    {"old_string", HARNESS_STRING, REQUIRED, MIN(1), .help = "The exact text to replace"},
    {"new_string", HARNESS_STRING, REQUIRED, .help = "The text to put instead"},
    {"replace_all", HARNESS_BOOLEAN, DEFAULT(0), .help = "Replace every occurrence instead of exactly one"},
    {0}};

static const harness_tool TOOLS[] = {
    {"read", "workspace.read",
     "Read a text file of the workspace. The content comes back as numbered lines (the line number right-aligned "
     "in 6 columns, a tab, then the line), at most `limit` lines from line `offset` (1-based); `total_lines` is the "
     "file's line count and `truncated` is true when lines remain after the window: read on with a larger offset. "
     "Lines longer than " LINE_MAX_TEXT " characters are cut with a note. A binary file is not shown: you get its "
     "size and SHA-256 instead. Paths are absolute under /workspace (or relative to it).",
     PARAMS({"path", HARNESS_PATH, REQUIRED, MIN(1), .help = "The file, e.g. /workspace/src/main.py"},
            {"offset", HARNESS_INTEGER, MIN(1), DEFAULT(1), .help = "First line to return (1-based)"},
            {"limit", HARNESS_INTEGER, MIN(1), MAX(100000), DEFAULT(OCISBX_BACKEND_READ_LIMIT),
             .help = "How many lines at most"}),
     harness_tool_read, 0},
    {"write", "workspace.write",
     "Create or replace a file of the workspace with `content` (text). Missing parent directories are created. "
     "The write is checked: it either replaces the whole file or leaves the old one untouched. Returns the path, "
     "the size in bytes and the SHA-256 (hex) of what was written. To change part of a file, prefer `edit`.",
     PARAMS({"path", HARNESS_PATH, REQUIRED, MIN(1), .help = "The file to write, e.g. /workspace/README.md"},
            {"content", HARNESS_STRING, REQUIRED, .help = "The whole new content of the file"}),
     harness_tool_write, 0},
    {"edit", "workspace.write",
     "Replace text in a file: `old_string` must occur exactly once (error not_unique when it occurs several times: "
     "add surrounding lines to make it unique, or set replace_all), or the error no_match when it does not occur "
     "(read the file again and copy the text exactly, including indentation). Line endings: a file with CRLF "
     "endings matches an LF old_string and keeps its CRLF. Several changes to one file at once: `edits` instead "
     "of old_string/new_string, applied in order, each to the result of the ones before; one failing edit changes "
     "nothing and the error names its index (edits[i]). dry_run=true writes nothing and shows the diff. With "
     "`expected_sha256` (from an earlier write or edit) the edit is refused with the error conflict when the file "
     "changed since. Nothing changes on any error. Returns the number of replacements, the new SHA-256 and a "
     "unified diff of the change.",
     PARAMS({"path", HARNESS_PATH, REQUIRED, MIN(1), .help = "The file to edit"},
            {"old_string", HARNESS_STRING, MIN(1), .help = "The exact text to replace (not with edits)"},
            {"new_string", HARNESS_STRING, .help = "The text to put instead (not with edits)"},
            {"replace_all", HARNESS_BOOLEAN, DEFAULT(0),
             .help = "Replace every occurrence of old_string instead of exactly one"},
            {"edits", HARNESS_LIST, MIN(1), MAX(EDITS_MAX), .items = EDIT_ITEMS,
             .help = "Several edits, applied in order, all or none (instead of old_string/new_string)"},
            {"dry_run", HARNESS_BOOLEAN, DEFAULT(0), .help = "Write nothing: return the diff the edit would make"},
            {"expected_sha256", HARNESS_STRING, MIN(64),
             .help = "Refuse the edit unless the file's SHA-256 (hex) is this"}),
     harness_tool_edit, 0},
    {"search", "workspace.read",
     "Search file contents under `path` for a POSIX extended regular expression (as grep -E), or for a literal "
     "string with literal=true. `glob` limits the files searched by name (e.g. *.py, matched at any depth; "
     "src/**/*.c with a slash). output_mode content (default): matching lines as {path, line, text} with "
     "absolute paths, and with `context` N also the N lines before and after each (before, after); "
     "files_with_matches: just the files ({files}); count: matching lines per file ({counts: [{path, count}]}). "
     "At most head_limit entries from entry `offset`: `truncated` is true when more remain; page on with "
     "offset = next_offset, or narrow the pattern or the path. /workspace/.ocisbx is skipped.",
     PARAMS({"pattern", HARNESS_STRING, REQUIRED, MIN(1), .help = "Regular expression (or literal text)"},
            {"path", HARNESS_PATH, MIN(1), .implied = "/workspace",
             .help = "Directory or file to search (default /workspace)"},
            {"glob", HARNESS_STRING, MIN(1), .help = "Only files whose name matches this glob"},
            {"literal", HARNESS_BOOLEAN, DEFAULT(0), .help = "Treat pattern as plain text"},
            {"ignore_case", HARNESS_BOOLEAN, DEFAULT(0), .help = "Match case-insensitively"},
            {"output_mode", HARNESS_STRING, CHOICES("content", "files_with_matches", "count"), .has_default = true,
             .def_str = "content",
             .help = "content: matching lines; files_with_matches: the files; count: matches per file"},
            {"context", HARNESS_INTEGER, MIN(0), MAX(OCISBX_SEARCH_MAX_CONTEXT), DEFAULT(0),
             .help = "content mode: lines of context before and after each match"},
            {"head_limit", HARNESS_INTEGER, MIN(1), MAX(OCISBX_SEARCH_MAX_LIMIT),
             DEFAULT(OCISBX_BACKEND_DEFAULT_SEARCH_RESULTS), .help = "Most entries returned"},
            {"offset", HARNESS_INTEGER, MIN(0), DEFAULT(0), .help = "Entries to skip first (paging)"},
            {"max_results", HARNESS_INTEGER, MIN(1), MAX(OCISBX_SEARCH_MAX_LIMIT),
             .help = "The older name of head_limit: when given, the most entries returned"}),
     harness_tool_search, HARNESS_TOOL_LISTS_PATHS},
    {"glob", "workspace.read",
     "Find files by name pattern under `path`: * and ? stay within one directory level, ** crosses any number of "
     "them (e.g. **/*.py, src/**/test_*.c). Returns absolute paths; `truncated` is true when there were too many "
     "to list. /workspace/.ocisbx is skipped.",
     PARAMS({"pattern", HARNESS_STRING, REQUIRED, MIN(1), .help = "The glob, relative to path"},
            {"path", HARNESS_PATH, MIN(1), .implied = "/workspace",
             .help = "Directory to search from (default /workspace)"}),
     harness_tool_glob, HARNESS_TOOL_LISTS_PATHS},
    {"ls", "workspace.read",
     "List a directory of the workspace: each entry's name, type (file, dir, link or other) and size in bytes, "
     "in byte order of the names, at most `limit` from entry `offset`; `truncated` is true when more follow "
     "(list on with offset = next_offset).",
     PARAMS({"path", HARNESS_PATH, REQUIRED, MIN(1), .help = "The directory, e.g. /workspace"},
            {"limit", HARNESS_INTEGER, MIN(1), MAX(OCISBX_SEARCH_MAX_LIMIT), DEFAULT(OCISBX_BACKEND_LS_DEFAULT_LIMIT),
             .help = "Most entries returned"},
            {"offset", HARNESS_INTEGER, MIN(0), DEFAULT(0), .help = "Entries to skip first (paging)"}),
     harness_tool_ls, HARNESS_TOOL_LISTS_PATHS},
    {"exec", "workspace.exec",
     "Run a shell command (sh -c) in the workspace, cwd /workspace unless `cwd` says otherwise. The command is "
     "stopped at `timeout` seconds (TERM, then KILL): it then has no exit_code and timed_out is true; split long "
     "work or run it in the background. stdout and stderr come back merged, in the order written, as `output`; "
     "long output is cut to its head and tail with a note giving the number of bytes left out (truncated is "
     "true): redirect to a file and read or search it instead. With background=true the command keeps running "
     "and you get a job_id for the job tool. With yield_ms the call waits at most that long: a command still "
     "running then goes on as a background job and you get {job_id, running: true, output so far, truncated}; "
     "follow it with the job tool (action wait). The network may be unavailable.",
     PARAMS({"command", HARNESS_COMMAND, REQUIRED, MIN(1), .help = "The shell command line"},
            {"timeout", HARNESS_INTEGER, MIN(1), MAX(86400), DEFAULT(OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS / 1000),
             .help = "Seconds before the command is stopped"},
            {"cwd", HARNESS_PATH, MIN(1), .help = "Working directory under /workspace"},
            {"env", HARNESS_ENV, .help = "Extra environment variables, name to value"},
            {"background", HARNESS_BOOLEAN, DEFAULT(0), .help = "Start it and return a job_id at once"},
            {"yield_ms", HARNESS_INTEGER, MIN(1), MAX(JOB_WAIT_MAX_MS),
             .help = "Return after this many milliseconds if still running; it then goes on as a job"}),
     harness_tool_exec, 0},
    {"job", "workspace.exec",
     "Manage a background command started by exec (background=true, or one that outlived yield_ms). action "
     "status: whether it still runs, its exit_code and timed_out, its duration; wait: wait until it ends or "
     "wait_ms passes, then its status and the output since the last read (running, exit_code, timed_out, "
     "output, next_offset); output: its output from byte `offset` (use next_offset for the next call; "
     "truncated is true when more is there); kill: stop it and everything it started.",
     PARAMS({"job_id", HARNESS_STRING, REQUIRED, MIN(1), .help = "The job_id exec returned"},
            {"action", HARNESS_STRING, REQUIRED, CHOICES("status", "output", "wait", "kill"), .help = "What to do"},
            {"offset", HARNESS_INTEGER, MIN(0), DEFAULT(0),
             .help = "For output (and wait, when not 0): the byte offset to read from"},
            {"wait_ms", HARNESS_INTEGER, MIN(0), MAX(JOB_WAIT_MAX_MS), DEFAULT(JOB_WAIT_DEFAULT_MS),
             .help = "For wait: the most milliseconds to wait"}),
     harness_tool_job, 0},
    {"apply_patch", "workspace.write",
     "Change several files at once with a patch: `*** Begin Patch`, then operations, then `*** End Patch`. "
     "`*** Add File: PATH` then the new file's lines, each starting with +. `*** Delete File: PATH`. "
     "`*** Update File: PATH`, optionally `*** Move to: NEWPATH`, then hunks: each starts with `@@` (or `@@ TEXT` "
     "naming a line above the change, such as a def or class line), then lines starting with a space (context, "
     "unchanged), - (removed) or + (added); give about 3 lines of context around each change and end a hunk "
     "that reaches the end of the file with `*** End of File`. Paths are relative to /workspace (or absolute "
     "under it). Atomic: every hunk of every file is checked first; on any error nothing is changed. Returns "
     "the files changed ({path, action: add|update|delete|move, moved_to}) and a unified diff. Errors: "
     "invalid_patch (the line and what was expected), no_match (the hunk's lines are not in the file: read it "
     "again), not_found, is_directory, outside_workspace, conflict (one file in two operations).",
     PARAMS({"patch", HARNESS_PATCH, REQUIRED, MIN(1), .help = "The whole patch, *** Begin Patch to *** End Patch"}),
     harness_tool_apply_patch, 0},
};

const harness_tool *harness_tools(size_t *n)
{
    *n = sizeof TOOLS / sizeof TOOLS[0];
    return TOOLS;
}
