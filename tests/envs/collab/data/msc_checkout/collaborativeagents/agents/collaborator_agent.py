# Our own text for tests, in the layout of MultiSessionCollab's collaborator_agent.py: the
# line before the picked notes is an f-string in add_scaffolding_to_conversation. rapport
# parses this file, never runs it.


class Collaborator:
    def add_scaffolding_to_conversation(self, messages):
        if not self.picks:
            messages[0]["content"] = f"All notes:\n{self.notes}" + messages[0]["content"]
            return messages
        scaffolded_notes = self.pick(messages)
        line = f"Notes {{picked}} for this reply:\n{scaffolded_notes}"
        messages[0]["content"] = line + messages[0]["content"]
        return messages
