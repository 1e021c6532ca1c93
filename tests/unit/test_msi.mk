test_msi_SRCS :=
