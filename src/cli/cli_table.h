/* The command table's parts (cli_table.c, cli_table_api.c): the lists of
 * subcommands the table of commands points at. */
#ifndef OCISBX_CLI_TABLE_H
#define OCISBX_CLI_TABLE_H

#include "cli.h"

extern const cli_verb cli_sandbox_verbs[];
extern const cli_verb cli_sandbox_collection_verbs[];
extern const cli_verb cli_sandbox_command_verbs[];
extern const cli_verb cli_sandbox_command_collection_verbs[];
extern const cli_verb cli_sandbox_command_event_verbs[];
extern const cli_verb cli_sandbox_command_output_verbs[];
extern const cli_verb cli_sandbox_file_verbs[];
extern const cli_verb cli_sandbox_snapshot_verbs[];
extern const cli_verb cli_sandbox_snapshot_collection_verbs[];
extern const cli_verb cli_command_verbs[];
extern const cli_verb cli_file_verbs[];
extern const cli_verb cli_snapshot_verbs[];

#endif
