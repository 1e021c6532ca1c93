test_json_SRCS := app/json.c
