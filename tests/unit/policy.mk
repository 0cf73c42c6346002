# tests/unit/policy.mk -- unit tests of policy/.
