# test_cli_table calls the CLI's parsers and help in-process: it links the
# CLI's code (everything of the program but main).
target_link_libraries(test_cli_table PRIVATE ocisbx_cli_core)
