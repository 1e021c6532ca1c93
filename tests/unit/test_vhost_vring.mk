# the back end's descriptor checks (host/vring) and its vsock header checks
test_vhost_vring_SRCS := $(VRING_SRCS) host/vhost-vsock/vsock_hdr.c
