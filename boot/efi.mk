# boot/efi.mk — the GNU-EFI direct boot path (included by the Makefile).
#   build/ringside.efi        UEFI application (PE32+) carrying the kernel ELF
#   build/ringside-esp.img    FAT ESP image: EFI/BOOT/BOOTX64.EFI
#   build/iso-extra/EFI/ringside/ringside.efi   the same on the ISO (GRUB chainloads it)
# Sources: boot/efi_*.c, built with Debian's gnu-efi, never part of the kernel.

GNUEFI_LIB := /usr/lib
GNUEFI_INC := /usr/include/efi
EFI_BUILD := $(BUILD)/efi
EFI_SRCS := $(wildcard boot/efi_*.c)
EFI_OBJS := $(patsubst %.c,$(EFI_BUILD)/%.o,$(EFI_SRCS))
# The kernel the EFI image embeds: symbols kept (the loader looks up its
# entry), debug info dropped.
EFI_KERNEL := $(EFI_BUILD)/kernel.elf
EFI_CFLAGS := -std=gnu11 -O2 -g $(WARN) -ffreestanding -fpic -fshort-wchar \
	-fno-stack-protector -fno-stack-check -mno-red-zone -maccumulate-outgoing-args \
	-DGNU_EFI_USE_MS_ABI -isystem $(GNUEFI_INC) -isystem $(GNUEFI_INC)/x86_64 -I. \
	-DRINGSIDE_KERNEL_ELF='"$(EFI_KERNEL)"' -MMD -MP
EFI_LDFLAGS := -nostdlib -shared -Bsymbolic -znocombreloc -T $(GNUEFI_LIB)/elf_x86_64_efi.lds
EFI_SECTIONS := .text .sdata .data .dynamic .dynsym .rel .rela .rel.* .rela.* .reloc
ESP_IMG := $(BUILD)/ringside-esp.img
ESP_SIZE_MB := 16

.PHONY: efi efi-clean
all: $(BUILD)/ringside.efi $(ESP_IMG)
efi: $(BUILD)/ringside.efi $(ESP_IMG)

$(EFI_KERNEL): $(BUILD)/ringside.elf
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@

$(EFI_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  EFICC   $<"
	@$(KCC) $(EFI_CFLAGS) -c $< -o $@

# .incbin reads the kernel at assembly time
$(EFI_BUILD)/boot/efi_kernel.o: $(EFI_KERNEL)

$(EFI_BUILD)/ringside.so: $(EFI_OBJS)
	@echo "  EFILD   $@"
	@ld $(EFI_LDFLAGS) -o $@ $(GNUEFI_LIB)/crt0-efi-x86_64.o $(EFI_OBJS) \
		-L$(GNUEFI_LIB) -lefi -lgnuefi

$(BUILD)/ringside.efi: $(EFI_BUILD)/ringside.so
	@echo "  EFI     $@"
	@$(OBJCOPY) $(addprefix -j ,$(EFI_SECTIONS)) --target efi-app-x86_64 --subsystem=10 $< $@

# A superfloppy FAT16 (no partition table): OVMF's FAT driver takes the
# whole disk, and the removable-media path EFI/BOOT/BOOTX64.EFI needs no
# boot entry and no startup.nsh.
$(ESP_IMG): $(BUILD)/ringside.efi
	@echo "  ESP     $@"
	@rm -f $@.tmp
	@truncate -s $(ESP_SIZE_MB)M $@.tmp
	@mformat -i $@.tmp -v RINGSIDE ::
	@mmd -i $@.tmp ::/EFI ::/EFI/BOOT ::/EFI/ringside
	@mcopy -i $@.tmp $< ::/EFI/BOOT/BOOTX64.EFI
	@mcopy -i $@.tmp $< ::/EFI/ringside/ringside.efi
	@mv $@.tmp $@

# The ISO carries the image too, for GRUB's chainloader entry (iso/grub.cfg);
# iso/mkiso copies build/iso-extra/ into the ISO root.
$(BUILD)/iso-extra/EFI/ringside/ringside.efi: $(BUILD)/ringside.efi
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/ringside.iso: $(BUILD)/iso-extra/EFI/ringside/ringside.efi

clean: efi-clean
efi-clean:
	rm -rf $(EFI_BUILD) $(EFI_STALE_BUILD) $(BUILD)/iso-extra $(BUILD)/ringside.efi \
		$(BUILD)/efi-stale-key.efi $(ESP_IMG) $(ESP_IMG).tmp

-include $(EFI_OBJS:.o=.d)

# Test flavour for tests/qemu/test_efi.py, built on demand only: the first
# memory map key is made stale on purpose, so ExitBootServices must be retried.
EFI_STALE_BUILD := $(BUILD)/efi-stale-key
EFI_STALE_OBJS := $(patsubst %.c,$(EFI_STALE_BUILD)/%.o,$(EFI_SRCS))

$(EFI_STALE_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  EFICC   $< (stale-key test)"
	@$(KCC) $(EFI_CFLAGS) -DRINGSIDE_EFI_STALE_KEY_TEST -c $< -o $@

$(EFI_STALE_BUILD)/boot/efi_kernel.o: $(EFI_KERNEL)

$(EFI_STALE_BUILD)/ringside.so: $(EFI_STALE_OBJS)
	@ld $(EFI_LDFLAGS) -o $@ $(GNUEFI_LIB)/crt0-efi-x86_64.o $(EFI_STALE_OBJS) \
		-L$(GNUEFI_LIB) -lefi -lgnuefi

$(BUILD)/efi-stale-key.efi: $(EFI_STALE_BUILD)/ringside.so
	@$(OBJCOPY) $(addprefix -j ,$(EFI_SECTIONS)) --target efi-app-x86_64 --subsystem=10 $< $@

-include $(EFI_STALE_OBJS:.o=.d)
