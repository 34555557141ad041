#!/usr/bin/env python3
"""oot-irq-sim.py IRQ_SIM_C: makes kernel/irq/irq_sim.c buildable as a module of its own.

irq_to_desc() is exported only for KVM on Book3S (amd64 and arm64 alike), so an out-of-tree
irq_sim cannot call handle_simple_irq(irq_to_desc(irq)); the exported
generic_handle_domain_irq() runs the same flow handler. A module also needs a licence tag.
Used by scripts/board/setup and scripts/board/setup-arm64."""
import re, sys

p = sys.argv[1]
s = open(p).read()
s, n1 = re.subn(r"\n\s*int irqnum;", "", s, count=1)
s, n2 = re.subn(r"irqnum = irq_find_mapping\(work_ctx->domain, offset\);\s*handle_simple_irq\(irq_to_desc\(irqnum\)\);",
                "generic_handle_domain_irq(work_ctx->domain, offset);", s, count=1)
if n1 != 1 or n2 != 1:
    sys.exit("irq_sim.c changed upstream: the out-of-tree patch no longer applies")
s += '\n#include <linux/module.h>\nMODULE_LICENSE("GPL");\n'
open(p, "w").write(s)
