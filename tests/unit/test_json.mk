test_json_SRCS := app/json.c kernel/json_writer.c
