#!/usr/bin/env python3
"""Renders the web client's PNG icons from their SVG sources with Debian's headless Chromium.

Run from the repository root after changing nginx/www/icons/*.svg (the PNGs are committed; nothing
runs this during a build):

    python3 Tests/webclient/make_icons.py
"""

import os
import shutil
import subprocess
import sys
import tempfile

ICONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nginx", "www", "icons")

# (source SVG, output PNG, size in px)
OUTPUTS = [
    ("icon.svg", "icon-192.png", 192),
    ("icon.svg", "icon-512.png", 512),
    ("maskable.svg", "maskable-512.png", 512),
    ("maskable.svg", "apple-touch-icon.png", 180),
    ("badge.svg", "badge-96.png", 96),
]


def main() -> int:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as scratch:
        for source, output, size in OUTPUTS:
            target = os.path.join(ICONS, output)
            subprocess.run(
                [
                    chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={scratch}/profile", "--default-background-color=00000000",
                    f"--window-size={size},{size}", f"--screenshot={target}",
                    "file://" + os.path.abspath(os.path.join(ICONS, source)),
                ],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
            )
            print(f"{output}: {size}x{size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
