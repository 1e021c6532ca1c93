test_net_ctrl_SRCS := drivers/virtio/virtio_net_ctrl.c
