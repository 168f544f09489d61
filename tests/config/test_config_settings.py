"""One route per config key: format names from the formats' registry, loop settings assembled."""

from __future__ import annotations

import dataclasses
from typing import get_args

from terrarium.config.models import CreatureConfig
from terrarium.controller.assembly import LoopSettings
from terrarium.formats import FORMAT_NAMES


def test_config_tool_formats_are_the_registered_formats() -> None:
    allowed = get_args(CreatureConfig.model_fields["tool_format"].annotation)
    assert sorted(allowed) == sorted(FORMAT_NAMES)


def test_loop_settings_define_no_defaults_of_their_own() -> None:
    for f in dataclasses.fields(LoopSettings):
        assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING, f.name
