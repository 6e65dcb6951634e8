"""Issue 37: parts read as separate from the absence of links, not only from cues; and
what an instruction governs never cut from it."""

from __future__ import annotations

import pytest

from fanout import detect

from ._expect import split_as as _split_as


class TestWithoutACue:
    @pytest.mark.parametrize(
        "text",
        [
            "How tall is Mont Blanc? How deep is Lake Baikal?",
            "What is the capital of Chile? Who wrote Dracula?",
            "whats the population of canada? how many legs does a spider have?",
            "¿Cuántos huesos tiene el cuerpo humano? ¿En qué año llegó el hombre a la Luna?",
            "Wann fiel die Berliner Mauer? Wie viele Einwohner hat Hamburg?",
            "Quelle est la capitale du Japon ? Qui a écrit Les Misérables ?",
            "Chi ha scritto la Divina Commedia? Qual è il fiume più lungo d'Italia?",
        ],
    )
    def test_two_complete_questions_back_to_back_are_split(self, text: str) -> None:
        """Two questions each about something of its own, with nothing in one that leans
        on the other, are two parts though no word says so."""
        _split_as(text, 2)

    @pytest.mark.parametrize(
        "text",
        [
            "Is it safe to travel to Peru right now? What precautions should I take?",
            "What's the weather like in Lisbon in March? Should I pack a raincoat?",
            "What's a good laptop for video editing? Which one would you recommend under $1500?",
            "Why is my bread so dense? What am I doing wrong with the yeast?",
            "¿Es caro vivir en Madrid? ¿Qué barrios me recomiendas?",
            "Lohnt sich ein E-Auto in Deutschland? Welches würdest du empfehlen?",
            "Chi ha scritto la Divina Commedia? In quale città è morto?",
            "Nutuk'u kim yazdı? Hangi yıl yayımlandı?",
            "Czy bezpiecznie jest teraz jechać do Peru? Jakie środki ostrożności powinienem podjąć?",
        ],
    )
    def test_questions_about_the_speakers_own_matter_or_an_unnamed_subject_stay_whole(
        self, text: str
    ) -> None:
        """Advice (should I, recommend, würdest du), a possessive "my", a question whose
        subject is left to the one before where the language drops it, and, in a language
        not read word by word, a part that names nothing of its own: no licence to split
        without a cue."""
        assert not detect(text).independent

    def test_a_follow_up_opening_with_like_or_i_mean_is_part_of_the_question(self) -> None:
        """ "Like, why ...?" and "I mean, ..." say the first question again, more precisely."""
        for text in (
            "Can you explain how inflation works? Like, why do prices keep rising every year?",
            "Why do we dream? I mean, what is the brain actually doing during REM sleep?",
        ):
            assert len(detect(text).questions) == 1

    def test_a_rhetorical_question_before_the_real_one_is_context(self) -> None:
        """ "Ever wonder why ...?" is asked for effect: the question after it is the one."""
        d = detect(
            "Ever wonder why we still use QWERTY keyboards? What's the actual history behind "
            "the layout?"
        )
        assert not d.independent
        assert len(d.questions) == 1

    def test_a_quoted_title_is_something_of_its_own(self) -> None:
        """«Мастера и Маргариту» names what the question is about, like a capitalised name."""
        _split_as("Кто написал «Мастера и Маргариту»? Сколько стоит билет в Эрмитаж?", 2)

    def test_a_superlative_after_the_noun_names_a_new_thing(self) -> None:
        """ "la montaña más alta de México" is no reference to a name before it."""
        _split_as("¿Quién escribió Don Quijote? Y ¿cuál es la montaña más alta de México?", 2)


class TestCues:
    @pytest.mark.parametrize(
        ("text", "header"),
        [
            ("Mam dwa pytania: jak wysoki jest Mont Blanc? Kto napisał Pana Tadeusza?", "Mam dwa pytania:"),
            ("Ik heb twee vragen: hoe oud is de aarde? Wie schilderde De Nachtwacht?", "Ik heb twee vragen:"),
            ("İki sorum var: Ankara'nın nüfusu ne kadar? Suyun kaynama noktası kaç derece?", "İki sorum var:"),
            ("I've got two questions. What's the capital of Peru? How do I get wine out of a rug?", "I've got two questions."),
        ],
    )  # fmt: skip
    def test_a_header_that_counts_the_questions_splits_them(self, text: str, header: str) -> None:
        """ "Mam dwa pytania:", "Ik heb twee vragen:", "İki sorum var:", "I've got two
        questions." announce the parts, and are sent with none of them."""
        _split_as(text, 2)
        assert detect(text).header == header

    @pytest.mark.parametrize(
        ("text", "second"),
        [
            ("What's the capital of Peru?\n\nP.S. how do I remove a wine stain?", "how do I remove"),
            ("Can you recommend a sci-fi novel?\nPS: what's the time difference between London and Tokyo?", "what's the time"),
            ("Wie funktioniert ein Kühlschrank? P.S. Wann wurde Goethe geboren?", "Wann wurde Goethe"),
            ("¿Cómo se hace una tortilla? PD: ¿cuál es la moneda de Suiza?", "¿cuál es la moneda"),
        ],
    )  # fmt: skip
    def test_a_ps_question_is_a_separate_part(self, text: str, second: str) -> None:
        """P.S., PS:, PD: open a part of its own, and are not sent with it."""
        assert _split_as(text, 2)[1].startswith(second)


class TestWhatAnInstructionGoverns:
    @pytest.mark.parametrize(
        "text",
        [
            "Here are the questions I plan to ask at my interview: What does a typical day look "
            "like? How is performance measured? Can you suggest more?",
            "Rate my interview questions: Why do you want this job? Where do you see yourself in "
            "five years?",
            "Voici les questions que je compte poser à l'entretien : Quelles sont les missions ? "
            "Comment se passe l'intégration ? Tu peux m'en proposer d'autres ?",
        ],
    )
    def test_questions_written_for_someone_else_are_the_material_of_one_request(
        self, text: str
    ) -> None:
        """An interview's questions, or "the questions I plan to ask", are worked on
        together, not answered one by one."""
        assert not detect(text).independent

    @pytest.mark.parametrize(
        "text",
        [
            "Which is cheaper: 3 for $10 or $3.50 each? And how much do I save by picking the "
            "cheaper one?",
            "Which is faster: flying from Paris to Rome or taking the night train? How long does "
            "each option take?",
        ],
    )
    def test_a_question_is_not_cut_from_its_options_at_a_colon(self, text: str) -> None:
        """The options after "Which is cheaper:" belong to it, and the follow-up leans on it."""
        d = detect(text)
        assert not d.independent
        assert d.questions[0].text.startswith("Which is")
        assert " or " in d.questions[0].text

    @pytest.mark.parametrize(
        ("text", "groups"),
        [
            ("a) Find the derivative of x^3 + 2x. b) Use your answer from (a) to find the slope at x = 2.", [[0, 1]]),
            ("1. What is 6 x 7?\n2. Who wrote Emma?\n3. Using your result from 1, is it even?", [[0, 2], [1]]),
            ("(a) Compute the mean of 4, 8 and 15. (b) Using the result above, find how far 15 is from it.", [[0, 1]]),
            ("1. 3と4の和を求めてください。\n2. 1の結果を使って、その数の二乗を計算してください。", [[0, 1]]),
        ],
    )  # fmt: skip
    def test_a_part_that_uses_an_earlier_result_stays_with_it(
        self, text: str, groups: list[list[int]]
    ) -> None:
        """ "your answer from (a)", "your result from 1", "the result above", "1の結果を使って"
        name the part they build on."""
        assert detect(text).groups == groups


class TestListsWithoutMarkers:
    @pytest.mark.parametrize(
        ("text", "starts"),
        [
            ("Please: translate 'good morning' into French, give me the boiling point of ethanol, and suggest a name for a cat.",
             ["translate", "give me", "suggest"]),
            ("Can you tell me the capital of Mongolia, explain how vaccines work, and recommend a podcast about history?",
             ["Can you tell me", "explain", "recommend"]),
            ("Name three primary colors, convert 100 Fahrenheit to Celsius, and define photosynthesis.",
             ["Name", "convert", "define"]),
            ("Bitte: nenne mir die Hauptstadt von Kanada, erkläre die Photosynthese und empfiehl mir ein gutes Buch.",
             ["nenne", "erkläre", "empfiehl"]),
            ("I need a few things: a catchy name for my bakery, the opening hours of the British Museum, and a recipe for banana bread.",
             ["a catchy name", "the opening hours", "a recipe"]),
        ],
    )  # fmt: skip
    def test_requests_listed_with_commas_are_parts(self, text: str, starts: list[str]) -> None:
        """Requests in one sentence, each with its own verb and object (or items after a
        header), are parts; the commas and the "and" are left out."""
        for part, start in zip(_split_as(text, 3), starts, strict=True):
            assert part.startswith(start)

    @pytest.mark.parametrize(
        "text",
        [
            "Summarize this article, list the key points, and suggest a title for it.",
            "Write a story about a dragon, make it funny, and give it a title.",
            "Explain recursion, give an example, and compare it with iteration.",
        ],
    )
    def test_requests_on_one_text_or_leaning_on_each_other_stay_together(self, text: str) -> None:
        """Tasks on "this article", a request with nothing of its own, "it": one group."""
        assert not detect(text).independent

    @pytest.mark.parametrize(
        "text",
        [
            "Things I need help with:\n- a name for my new bakery\n- how to file taxes as a freelancer\n- the best month to visit Japan",
            "Can you help me with a few things?\n- a birthday message for my boss\n- the difference between baking soda and baking powder\n- a good stretching routine for runners",
            "Necesito ayuda con estas cosas:\n- un nombre para mi perro\n- la diferencia entre virus y bacteria\n- un plan de comidas para una semana",
        ],
    )  # fmt: skip
    def test_a_bulleted_list_of_things_to_help_with_splits(self, text: str) -> None:
        """Under "Things I need help with:" each bullet is an ask, a noun phrase as much
        as a question."""
        _split_as(text, 3)

    def test_a_list_under_help_with_one_thing_stays_whole(self) -> None:
        """ "I need help with my essay:" and the essay's problems: one task."""
        assert not detect(
            "I need help with my essay:\n- the intro is weak\n- the conclusion"
        ).independent

    @pytest.mark.parametrize(
        ("text", "texts"),
        [
            ("我有两个问题，一是怎么提高英语口语，二是北京有什么好玩的地方", ["怎么提高英语口语", "北京有什么好玩的地方"]),
            ("想问三件事：一是Python怎么读取Excel文件，二是长城有多长，三是怎么做红烧肉",
             ["Python怎么读取Excel文件", "长城有多长", "怎么做红烧肉"]),
        ],
    )  # fmt: skip
    def test_chinese_yi_shi_er_shi_enumerations_split(self, text: str, texts: list[str]) -> None:
        """ "一是…，二是…" numbers the asks; a header "我有两个问题" / "想问三件事" is left out."""
        assert _split_as(text, len(texts)) == texts

    def test_reasons_enumerated_with_yi_shi_are_no_questions(self) -> None:
        """ "原因有两个，一是…，二是…" lists reasons, not asks."""
        assert not detect("原因有两个，一是天气不好，二是我太累了。你觉得我应该去吗？").independent

    def test_of_each_before_a_noun_is_no_reference_to_the_parts_before(self) -> None:
        """ "the price of each ticket" is about tickets; "How long is each?" is about the
        parts before."""
        _split_as("Who painted the Mona Lisa? What is the price of each ticket to the Louvre?", 2)
        assert detect("1. Name two rivers in France.\n2. How long is each?").groups == [[0, 1]]


class TestRunOns:
    @pytest.mark.parametrize(
        ("text", "texts"),
        [
            ("what year did the berlin wall fall and how do i cook quinoa", ["what year did the berlin wall fall", "how do i cook quinoa"]),
            ("cuando cayo el muro de berlin y como se cocina la quinoa", ["cuando cayo el muro de berlin", "como se cocina la quinoa"]),
            ("everest ne kadar yüksek ve mona lisa'yı kim yaptı", ["everest ne kadar yüksek", "mona lisa'yı kim yaptı"]),
            ("ما هي عاصمة كندا وكيف أطبخ الأرز", ["ما هي عاصمة كندا", "كيف أطبخ الأرز"]),
            ("珠穆朗玛峰有多高还有怎么煮米饭", ["珠穆朗玛峰有多高", "怎么煮米饭"]),
            ("에베레스트 산은 얼마나 높나요 그리고 김치는 어떻게 만드나요", ["에베레스트 산은 얼마나 높나요", "김치는 어떻게 만드나요"]),
        ],
    )  # fmt: skip
    def test_questions_run_together_without_punctuation_are_split(
        self, text: str, texts: list[str]
    ) -> None:
        """Two questions joined by and / y / ve / و / 还有 / 그리고 with no punctuation,
        each with its own verb and object (a question word written without its accent,
        or late in Turkish), are two parts."""
        assert _split_as(text, 2) == texts

    @pytest.mark.parametrize(
        "text",
        [
            "who wrote the hobbit and when did he die",
            "sholay kisne direct ki aur uski release date kya thi",
            "谁写了红楼梦还有他是哪个朝代的人",
            "من كتب رواية البؤساء ومتى توفي",
        ],
    )
    def test_a_run_on_whose_second_question_leans_on_the_first_stays_whole(self, text: str) -> None:
        """ "he", "uski", 他, a subject left to the verb: one group."""
        assert not detect(text).independent


class TestMorePairsWithoutACue:
    @pytest.mark.parametrize(
        "text",
        [
            "珠穆朗玛峰有多高？谁发明了电话？",
            "富士山の高さは何メートルですか？日本の首都はどこですか？",
            "에베레스트 산의 높이는 얼마인가요? 한국의 수도는 어디인가요?",
        ],
    )
    def test_two_questions_in_chinese_japanese_or_korean_each_standing_alone_split(
        self, text: str
    ) -> None:
        """Each with a subject of its own, nothing shared, no pronoun: two parts."""
        _split_as(text, 2)

    @pytest.mark.parametrize(
        "text",
        [
            "怎么学好日语？有什么好的教材吗？",
            "毎日コーヒーを飲んでも大丈夫ですか？カフェインは体に悪いですか？",
            "강아지가 밥을 잘 안 먹는데 정상인가요? 병원에 가야 하나요?",
            "北京的人口是多少？上海的人口是多少？",
            "夏目漱石の代表作は何ですか？どこで生まれましたか？",
        ],
    )
    def test_cjk_questions_of_one_matter_or_without_a_subject_stay_whole(self, text: str) -> None:
        """有什么…？ with no subject, 大丈夫, 정상 (the speaker's matter), a shared
        topic (人口), a question with no subject (どこで生まれましたか): not split."""
        assert not detect(text).independent

    def test_two_questions_typed_with_nothing_between_them_split(self) -> None:
        """ "whats the capital of peru how many legs does a spider have": the second
        question word and its verb start a part; "do you know how many ..." does not."""
        _split_as("whats the capital of peru how many legs does a spider have", 2)
        assert len(detect("Do you know how many legs a spider has").questions) == 1

    def test_one_short_statement_before_two_questions_is_sent_with_each(self) -> None:
        """ "Rust has no garbage collector." is context for both, not a reason to keep them
        whole; a statement about the speaker ("I'm visiting Tokyo next week.") is: the
        questions after it are about the speaker's plan."""
        d = detect(
            "Rust has no garbage collector. How does the borrow checker work? What is a trait "
            "object in Rust?"
        )
        assert d.groups == [[0], [1]]
        assert all(d.group_prompt(g).startswith("Rust has no garbage") for g in d.groups)
        text = (
            "I'm visiting Tokyo next week. What's the best area to stay in? How do I get from "
            "Narita to the city?"
        )
        assert not detect(text).independent

    def test_how_long_does_it_take_after_a_question_is_one_matter(self) -> None:
        """The "it" of "how long does it take" stands for the matter before it."""
        text = "What's the best way to learn Spanish? How long does it take to become fluent?"
        assert not detect(text).independent


class TestWhatIsNoAsk:
    def test_small_talk_before_a_request_is_a_greeting(self) -> None:
        """ "How are you today?" is not a question to answer apart from the request."""
        d = detect("Hi! How are you today? Can you help me write a cover letter for a barista job?")
        assert not d.independent

    @pytest.mark.parametrize(
        "text",
        [
            "Can you check the grammar in my paragraph below?\n\nDo you like hiking? I go every "
            "weekend with my dog. What about you, do you have a favorite trail?",
            "Proofread my email please.\nHi Tom, are you free on Friday? Can we move the meeting "
            "to 3pm?",
        ],
    )
    def test_questions_in_a_text_to_proofread_are_that_text(self, text: str) -> None:
        """After "check the grammar in my paragraph below", the questions are the text."""
        assert not detect(text).independent


class TestMoreShapesOfSeveralAsks:
    @pytest.mark.parametrize(
        ("text", "starts"),
        [
            ("Two things: (a) what's the difference between TCP and UDP (b) how do I convert a string to an int in Go",
             ["what's the difference", "how do I convert"]),
            ("Can you tell me what the capital of Mongolia is and also how many bones are in a human hand?",
             ["Can you tell me what", "how many bones"]),
            ("मुझे दो चीज़ें जाननी हैं: भारत की राजधानी क्या है? और पानी का क्वथनांक क्या है?",
             ["भारत की राजधानी", "पानी का क्वथनांक"]),
            ("I need to know 3 things:\n1. best laptop under $800\n2. how to remove rust from a bike chain\n3. the capital of Iceland",
             ["best laptop", "how to remove rust", "the capital of Iceland"]),
            ("hey so two things. first is there a way to undo git commit --amend. second whats a good name for a golden retriever",
             ["is there a way", "whats a good name"]),
        ],
    )  # fmt: skip
    def test_letters_inside_a_sentence_and_also_counted_things_and_bare_ordinals_split(
        self, text: str, starts: list[str]
    ) -> None:
        """ "(a) … (b) …" after a header, "and also how many …", "मुझे दो चीज़ें जाननी हैं:",
        "I need to know 3 things:" over noun phrases, "first … second …" without commas."""
        for part, start in zip(_split_as(text, len(starts)), starts, strict=True):
            assert part.startswith(start)

    def test_letters_that_number_the_options_of_one_question_stay_whole(self) -> None:
        """ "(a) a loan or (b) savings" are options."""
        assert not detect("Should I choose option (a) a loan or (b) savings?").independent

    @pytest.mark.parametrize(
        "text",
        [
            "Apa ibu kota Australia? Siapa penemu telepon di Amerika?",
            "Hur högt är Kebnekaise? Vem skrev Pippi Långstrump?",
        ],
    )
    def test_in_a_language_not_read_word_by_word_questions_naming_their_own_things_split(
        self, text: str
    ) -> None:
        """Each names something of its own (a capitalised word inside it), none the same."""
        _split_as(text, 2)

    @pytest.mark.parametrize(
        "text",
        [
            "Kto napisał Lalkę? Kiedy się urodził?",
            "Ile kosztuje bilet do Luwru? Czy Luwr jest otwarty?",
        ],
    )
    def test_in_a_language_not_read_word_by_word_a_part_without_a_name_or_the_same_name_stays(
        self, text: str
    ) -> None:
        """No name of its own (a pronoun may hide in it), or the same name: one group."""
        assert not detect(text).independent


class TestLeaningWithoutAPronoun:
    @pytest.mark.parametrize(
        "text",
        [
            "Who won the 2018 World Cup? Who scored in the final?",
            "Who wrote Pride and Prejudice? What other novels did Jane Austen write?",
            "When did the Berlin Wall fall? Who was the German chancellor at the time?",
            "What is the Pythagorean theorem? Can you show a worked example with a 3-4-5 triangle?",
            "¿Quién pintó Las Meninas? ¿Qué otras obras pintó Velázquez?",
            "Wann wurde die Titanic gebaut? Wer war damals Kapitän?",
        ],
    )
    def test_other_at_the_time_an_example_or_the_final_lean_on_the_question_before(
        self, text: str
    ) -> None:
        """ "what other novels", "at the time", "damals", "an example", "the final": the
        later question is about the matter of the one before."""
        assert not detect(text).independent

    def test_a_word_inside_another_is_a_shared_topic(self) -> None:
        """ "planes" after "airplanes": the same matter, though not the same word."""
        assert not detect(
            "How do airplanes fly? Why don't planes fall when the engines stop?"
        ).independent


class TestRequestsOnWhatTheOneBeforeFound:
    @pytest.mark.parametrize(
        "text",
        [
            "Find me a good vegetarian lasagna recipe, list the ingredients, and estimate the total cost.",
            "Pick a country in South America, name its capital, and tell me the population.",
            "Suggest a book for a long flight, summarize the plot, and tell me how long it takes to read.",
        ],
    )  # fmt: skip
    def test_listed_requests_about_the_ingredients_or_the_plot_stay_together(
        self, text: str
    ) -> None:
        """ "list the ingredients", "the population", "how long it takes": of what the
        request before found."""
        d = detect(text)
        assert not d.independent
        assert len(d.questions) == 3

    def test_a_later_question_about_the_speakers_case_stays_with_the_one_before(self) -> None:
        """ "How many euros would I get for $500?" applies the rate asked before."""
        text = (
            "What's the exchange rate from USD to EUR today? How many euros would I get for $500?"
        )
        assert not detect(text).independent


class TestQuestionsInsideTellMe:
    @pytest.mark.parametrize(
        ("text", "second"),
        [
            ("Kannst du mir sagen, wie hoch der Eiffelturm ist, und wer die Mona Lisa gemalt hat?", "wer die Mona Lisa"),
            ("Pourriez-vous me dire quelle est la capitale du Pérou et combien d'habitants compte Lyon ?", "combien d'habitants"),
            ("Dimmi qual è la capitale del Perù e quanti abitanti ha Milano.", "quanti abitanti"),
        ],
    )  # fmt: skip
    def test_two_questions_asked_inside_tell_me_split_after_the_first(
        self, text: str, second: str
    ) -> None:
        """The first question stays with "Kannst du mir sagen" / "Pourriez-vous me dire" /
        "Dimmi"; the second, after "und" / "et" / "e", is a part of its own."""
        parts = _split_as(text, 2)
        assert parts[1].startswith(second)

    @pytest.mark.parametrize(
        "text",
        [
            "какая столица Перу и сколько лет Эрмитажу",
            "Peru'nun başkenti neresi? Örümceğin kaç bacağı var?",
        ],
    )
    def test_a_name_or_an_owner_of_its_own_is_a_subject_in_russian_and_turkish(
        self, text: str
    ) -> None:
        """A name of its own (Russian has no articles to show a noun is new), an owner in
        the genitive (Turkish); "Сколько кораблей было в экспедиции?" has neither."""
        _split_as(text, 2)
        assert not detect("Кто открыл Америку? Сколько кораблей было в экспедиции?").independent


class TestTypedShorthand:
    def test_numbers_with_a_slash_at_the_start_of_lines_are_markers(self) -> None:
        """ "1/ …\\n2/ …" numbers the asks; "1/2 cup" is no marker."""
        _split_as("1/ what's the fastest way to learn touch typing\n2/ is coffee bad for kids", 2)
        assert not detect(
            "Add 1/2 cup of sugar\n3/4 cup of flour. How long do I bake it?"
        ).independent

    def test_can_u_help_me_with_2_things_is_a_header(self) -> None:
        """ "Hey can u help me w/ 2 things:" announces the parts that follow its colon."""
        text = (
            "Hey can u help me w/ 2 things: whats the formula for compound interest, and how "
            "do i make my resume stand out"
        )
        assert _split_as(text, 2)[1].startswith("how do i make")


class TestFromAFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "Quel est le plus haut sommet des Alpes ? Combien de personnes l'escaladent chaque année ?",
            "富士山はどこにありますか？高さは何メートルですか？",
        ],
    )
    def test_an_object_pronoun_or_a_height_with_no_owner_leans_on_the_question_before(
        self, text: str
    ) -> None:
        """ "l'escaladent" (climb it), "高さは" (the height, of what?): not split."""
        assert not detect(text).independent

    def test_im_wondering_how_asks(self) -> None:
        """ "Also I'm wondering how to …" is a question of its own, after "Also"."""
        text = "Could you tell me the population of Brazil? Also I'm wondering how to clean a cast iron pan."
        _split_as(text, 2)

    def test_a_hinglish_header_that_counts_the_asks(self) -> None:
        """ "bhai 2 cheezein batao:" announces two asks joined by "aur"."""
        _split_as(
            "bhai 2 cheezein batao: python install kaise kare aur Goa me best beach kaunsa hai", 2
        )


class TestFromASecondFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "Which ocean is the deepest? What lives at the bottom?",
            "Who invented the World Wide Web? What university did the inventor attend?",
            "Who won the Nobel Peace Prize in 2014? How old was the youngest winner?",
        ],
    )
    def test_the_bottom_or_the_inventor_with_nothing_to_say_whose_leans_back(
        self, text: str
    ) -> None:
        """A noun that is always something's ("the bottom", "the inventor", "the winner")
        with no "of …" after it, in a question naming nothing: the one before's."""
        assert not detect(text).independent

    def test_a_dutch_question_is_not_read_as_german(self) -> None:
        """ "In welk jaar was dat?": Dutch ("welk"), whose "dat" is not read; held."""
        assert not detect("Wie heeft de gloeilamp uitgevonden? In welk jaar was dat?").independent

    def test_also_inside_a_later_question_leans_on_the_one_before(self) -> None:
        """ "¿Se aplica también a los servicios?": "también" (also) ties it to the IVA."""
        assert not detect(
            "¿Cómo se calcula el IVA? ¿Se aplica también a los servicios?"
        ).independent

    def test_a_why_after_a_request_to_explain_is_about_what_it_explains(self) -> None:
        """ "Why does switching doors help?" after "Can you explain the Monty Hall problem?"."""
        text = "Can you explain the Monty Hall problem? Why does switching doors help?"
        assert not detect(text).independent


class TestFromAThirdFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "Welches Land hat die meisten Einwohner? Wie groß ist die Hauptstadt?",
            "What is the smallest country in the world? How many people live in such a tiny place?",
        ],
    )
    def test_die_hauptstadt_or_such_a_place_leans_on_the_question_before(self, text: str) -> None:
        """ "die Hauptstadt" with no "von …" (German capitalises every noun: no name), and
        "such a tiny place": the one before's."""
        assert not detect(text).independent

    @pytest.mark.parametrize(
        "text",
        ["Was ist Inflation? Warum steigen die Preise?", "什么是通货膨胀？为什么物价会上涨？"],
    )
    def test_a_why_after_a_definition_is_about_what_it_defines(self, text: str) -> None:
        """ "What is X?" in a few words, then a why naming nothing: one matter."""
        assert not detect(text).independent

    def test_a_fact_asked_with_what_is_is_no_definition(self) -> None:
        """ "what's the speed of light" asks a fact: a how after it stands alone."""
        _split_as("what's the speed of light and how do plants make food", 2)


class TestFromAFourthFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "What's the capital of Kenya? What's the best time of year to visit?",
            "Quelle est la plus grande ville du Canada ? Quel temps y fait-il en hiver ?",
        ],
    )
    def test_a_verb_with_no_object_or_french_y_leans_on_the_question_before(
        self, text: str
    ) -> None:
        """ "the best time to visit?" (visit what?), "y" (there): the one before's."""
        assert not detect(text).independent

    def test_a_mistyped_question_word_still_opens_a_run_on(self) -> None:
        """ "wat is …" opens the first question as "what is …" would."""
        _split_as("wat is the capitol of canada and how many ppl live in tokyo", 2)


class TestFromAFifthFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "Qual é a cidade mais populosa do Brasil? Qual é o prefeito atual?",
            "¿Cómo quito una mancha de vino tinto? ¿Sirve el bicarbonato?",
            "भारत का सबसे लंबा पुल कौन सा है? कितना लंबा है?",
        ],
    )
    def test_the_mayor_does_it_help_or_no_owner_leans_on_the_question_before(
        self, text: str
    ) -> None:
        """ "o prefeito" (of what?), "¿Sirve …?" (for what the question before wants), a
        Hindi question with no owner in the genitive: the one before's matter."""
        assert not detect(text).independent


class TestAfterAQuestionThatAsksForAThing:
    @pytest.mark.parametrize(
        "text",
        [
            "What's the highest waterfall on Earth? Can tourists visit?",
            "Which company makes the PlayStation? What year did the first console come out?",
            "Who was the first man in space? How long did the flight last?",
            "Quel pays produit le plus de café ? Quelle variété est la plus cultivée ?",
            "世界上最深的湖是哪个？湖水有多深？",
            "日本で一番人口が多い県はどこですか？県庁所在地はどこですか？",
        ],
    )
    def test_a_question_naming_nothing_after_one_asking_for_a_thing_stays_with_it(
        self, text: str
    ) -> None:
        """The answer of "Which …?", "Who was the first …?", "最深的…是哪个？" is what the
        question after it is about when that question names nothing of its own ("the
        flight", "Can tourists visit?", 湖水)."""
        assert not detect(text).independent

    @pytest.mark.parametrize(
        "text",
        [
            "Who discovered penicillin? What is the boiling point of ethanol at sea level?",
            "Кто написал «Мастера и Маргариту»? Сколько стоит билет в Эрмитаж?",
        ],
    )
    def test_one_that_says_which_or_names_its_own_still_splits(self, text: str) -> None:
        """ "the boiling point of ethanol" says which; "Эрмитаж" is a name of its own."""
        _split_as(text, 2)


class TestAfterAQuestionThatNamesSomething:
    @pytest.mark.parametrize(
        "text",
        [
            "Where is the Great Barrier Reef? Is snorkeling allowed?",
            "Dove si trova il Colosseo? Quanto costa il biglietto d'ingresso?",
            "東京スカイツリーの高さは？展望台はいくらですか？",
            "Where do penguins live? What do the chicks eat?",
            "Comment faire une bonne pâte à pizza ? Quelle farine utiliser ?",
        ],
    )
    def test_a_question_naming_nothing_after_one_naming_something_stays_with_it(
        self, text: str
    ) -> None:
        """After "the Great Barrier Reef", "il Colosseo", 東京スカイツリー, a question that
        names nothing ("Is snorkeling allowed?"), a bare "the chicks", an infinitive
        question ("Quelle farine utiliser ?") is about what was named."""
        assert not detect(text).independent

    @pytest.mark.parametrize(
        "text",
        [
            "Who painted the Sistine Chapel? Which planet has the most moons?",
            "Quantos estados tem o Brasil? Quem inventou o telefone?",
        ],
    )
    def test_a_question_asking_for_a_new_thing_or_who_made_it_still_splits(self, text: str) -> None:
        """ "Which planet has …?", "Quem inventou …?" ask about something of their own."""
        _split_as(text, 2)


class TestFromAnEighthFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "What is a black hole? Can anything escape once inside?",
            "Is Lisbon expensive? What neighborhoods are cheap?",
            "Wie alt ist der Kölner Dom? Wie lange hat der Bau gedauert?",
            "Quando foi fundada Brasília? Quem projetou os prédios?",
            "Wie funktioniert eine Solaranlage? Was kostet die Installation?",
        ],
    )
    def test_after_a_definition_or_a_name_a_question_naming_nothing_stays(self, text: str) -> None:
        """After "What is a black hole?" any question naming nothing is about it; "der
        Bau", "os prédios", "die Installation" say nothing of which; "What neighborhoods
        …?" asks about a part of what was named."""
        assert not detect(text).independent

    def test_the_most_and_who_invented_are_no_definite_references(self) -> None:
        """ "the most moons" says how many; "who invented the printing press" asks who
        made a kind of thing."""
        _split_as("What does HTTP stand for? Which planet has the most moons?", 2)
        _split_as("how many ounces are in a pound and who invented the printing press", 2)


class TestFromANinthFreshBatch:
    @pytest.mark.parametrize(
        "text",
        [
            "What language is spoken in Brazil? Is Spanish similar?",
            "Wie hoch ist die Zugspitze? Gibt es eine Seilbahn?",
        ],
    )
    def test_a_comparison_with_nothing_or_what_there_is_leans_on_the_question_before(
        self, text: str
    ) -> None:
        """ "similar" (to what?) and "Gibt es …?" (there, where?) are the one before's."""
        assert not detect(text).independent


class TestAShortQuestionAfterAnd:
    @pytest.mark.parametrize(
        "text",
        [
            "Deux petites questions : c'est quoi un trou noir ? Et qui a écrit Les Misérables ?",
            "Два вопроса: что такое чёрная дыра? И кто написал «Мастера и Маргариту»?",
            "两个问题：什么是黑洞？还有《红楼梦》是谁写的？",
            "दो सवाल: ब्लैक होल क्या है? और गोदान किसने लिखा?",
            "do sawal: black hole kya hota hai? aur Godaan kisne likha?",
        ],
    )
    def test_a_short_question_of_its_own_after_and_is_no_ellipsis(self, text: str) -> None:
        """ "Et qui a écrit …", "И кто написал «…»", "还有《…》是谁写的", "और गोदान किसने
        लिखा": a whole question naming its own thing, not "and the rest?"."""
        _split_as(text, 2)

    def test_a_thing_brought_in_with_its_article_is_a_question_of_its_own(self) -> None:
        """ "y ¿cómo se hace una paella?" brings in "una paella"."""
        text = (
            "Tengo varias dudas: ¿qué es un agujero negro?, ¿quién escribió Don Quijote? y "
            "¿cómo se hace una paella?"
        )
        _split_as(text, 3)


class TestFromAnEleventhFreshBatch:
    def test_an_object_pronoun_after_comment_leans_on_the_question_before(self) -> None:
        """ "Comment le garder frais ?": keep it (the bread) fresh."""
        text = "Pourquoi le pain rassis durcit-il ? Comment le garder frais ?"
        assert not detect(text).independent
