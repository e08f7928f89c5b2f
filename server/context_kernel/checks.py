"""What doctor's checks are made of: a check line, the line of code each language is tested with, and how
kernels are made for it (doctor.py for local kernels, gateway_doctor.py for a gateway's)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .kernels.backend import Kernel

KernelFactory = Callable[[str], "Kernel"]
# Kernel checks run a few at a time: twelve kernels starting at once on a 2-core machine time out.
KERNEL_CHECK_CONCURRENCY = 3

HELLO: dict[str, str] = {
    "python": "print('ok')", "shell": "echo ok", "r": "cat('ok\\n')", "javascript": "console.log('ok')",
    "typescript": "const s: string = 'ok'; console.log(s)", "ruby": "puts 'ok'", "go": 'fmt.Println("ok")',
    "rust": 'println!("ok");', "php": "echo \"ok\\n\";", "perl": 'print "ok\\n";', "elixir": 'IO.puts "ok"',
    "csharp": 'Console.WriteLine("ok");',
}


@dataclass
class Check:
    level: Literal["OK", "WARN", "FAIL"]
    subject: str
    detail: str

    def line(self) -> str:
        return f"[{self.level}] {self.subject}: {self.detail}"
