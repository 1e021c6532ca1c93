# The back end's device-side ring library (host/vring/).
test_vring_SRCS := $(wildcard host/vring/*.c)
