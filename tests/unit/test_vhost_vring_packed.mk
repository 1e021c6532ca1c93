# the back end's packed ring walk (host/vring) across the ring's end
test_vhost_vring_packed_SRCS := $(VRING_SRCS)
