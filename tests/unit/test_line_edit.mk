test_line_edit_SRCS := kernel/line_edit.c
