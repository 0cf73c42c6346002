# tests/unit/agent.mk -- unit tests of agent/.
