"""Asks run together ("and also", a bare "and" before a verb that asks again, cues
wherever they stand), the material of one request (a quoted text, questions others
will ask), and follow-ups that name nothing of their own (issue 37, third round).

Each table holds prompts written for the structure in several languages, not taken from
the labelled sets, with the look-alikes the rule must leave alone."""

from __future__ import annotations

import pytest

from fanout import detect
from fanout.detection._detector import SPLIT_THRESHOLD

from ._expect import kept_whole as _kept_whole
from ._expect import split_as as _split_as


class TestAQuotedTextIsMaterial:
    @pytest.mark.parametrize(
        "text",
        [
            "Can you check the grammar here? 'Did you get my email? I sent it yesterday.'",
            "¿Puedes corregir este mensaje? 'Hola, ¿ya llegaste a casa? ¿Quieres cenar mañana?'",
            "Peux-tu corriger ce texte ? 'Salut, tu viens ce soir ? On se retrouve où ?'",
            "Kannst du das verbessern? 'Hallo, hast du morgen Zeit? Wollen wir uns treffen?'",
            "Puoi correggere questo messaggio? 'Ciao, sei libero sabato? Andiamo al mare?'",
            "Можешь проверить текст? 'Привет, ты завтра свободен? Где встретимся?'",
            "Bu mesajı düzeltir misin? 'Merhaba, yarın müsait misin? Nerede buluşalım?'",
            "Translate this to German: 'Where is the train station? How much is a ticket?'",
            "Is this polite enough? 'Why haven't you answered? Are you ignoring me?'",
            "Kun je dit nakijken? 'Hoi, heb je morgen tijd? Zullen we koffie drinken?'",
            "Czy to brzmi dobrze? 'Dzień dobry, czy zamówienie już wysłano? Kiedy dotrze?'",
            "Bisa perbaiki kalimat ini? 'Kamu sudah makan? Mau ke mana nanti?'",
        ],
    )
    def test_questions_inside_a_single_quoted_text_are_not_parts(self, text: str) -> None:
        """A message in single quotes that holds sentences is what the request works
        on: its questions are not asks of their own, the prompt is one question."""
        d = detect(text)
        assert len(d.questions) == 1, (d.groups, d.reasons)

    @pytest.mark.parametrize(
        ("text", "groups"),
        [
            (
                "How do you say 'good morning' in Italian? Also, what's the tallest building"
                " in Europe?",
                [[0], [1]],
            ),
            (
                "Is it 'whom' or 'who' here? Unrelated, how many bones are in the human body?",
                [[0], [1]],
            ),
            (
                "My kids' school starts at 8. What's a quick breakfast? Also how do I fix a"
                " squeaky door?",
                [[0], [1]],
            ),
            (
                "Was ist die Hauptstadt von Kanada? Und wer hat 'Faust' geschrieben? Wie hoch"
                " ist die Zugspitze?",
                [[0], [1], [2]],
            ),
        ],
    )
    def test_a_quoted_word_or_an_apostrophe_leaves_the_parts_as_they_are(
        self, text: str, groups: list[list[int]]
    ) -> None:
        _split_as(text, groups)


class TestAnAdditiveAndJoinsTwoAsks:
    @pytest.mark.parametrize(
        "text",
        [
            "necesito saber a qué hora abre el museo del Prado y también si hay descuento para"
            " estudiantes",
            "me explica como funciona o imposto de renda e também me passa uma receita de bolo",
            "подскажите как поменять масло в машине и ещё где купить билеты в Большой театр",
            "підкажіть як приготувати вареники і ще скільки коштує віза до Канади",
            "ik zoek een goed boek over de Romeinen en ook tips voor een fietsroute in Zeeland",
            "Could you write a short thank-you note for my neighbour, and separately tell me how"
            " to descale a kettle?",
            "what's the best way to learn touch typing and also how many calories are in an"
            " avocado",
            "kun je uitleggen hoe een warmtepomp werkt en ook wat de hoofdstad van Canada is",
            "pizza hamuru nasıl yapılır, ayrıca ehliyet yenileme ücreti ne kadar",
            "erklär mir bitte die Relativitätstheorie und auch wie man Sauerteig ansetzt",
            "peux-tu me donner une recette de ratatouille et aussi comment on change un pneu de"
            " vélo",
            "dimmi come si prepara il tiramisù e anche quanto costa un biglietto per il Colosseo",
            "tolong jelaskan cara kerja blockchain dan juga berapa harga tiket ke Bali",
            "राजमा चावल बनाने की विधि बताइए और साथ ही यह बताइए कि पासपोर्ट कैसे बनवाएँ",
        ],
    )
    def test_and_also_between_two_asks_each_about_its_own_matter_splits(self, text: str) -> None:
        """An "and also", "y también", "и ещё", "en ook", ", ayrıca", "और साथ ही" between
        two asks, the second a question, "if", a request or a thing asked for: two parts
        (the Hindi "यह ... कि" points at the clause after it, not at the part before)."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "Recomiéndame un portátil para programar y también dime cuánto cuesta",
            "Explain how vaccines work and also give some examples",
            "Tell me about the history of Rome and also explain why it fell",
            "¿Cómo se hace una paella y también qué vino va bien con ella?",
            "Give me a recipe for lasagna and also tell me how long it keeps in the fridge",
            "подскажи хороший ноутбук и ещё сколько он стоит",
            "nenne mir ein gutes Buch über Rom und auch warum es so bekannt ist",
        ],
    )
    def test_an_additive_ask_that_leans_on_the_first_is_kept_with_it(self, text: str) -> None:
        _kept_whole(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Plan a 3-day trip to Rome and also include a day in Florence",
            "Write a cover letter for a nursing job and also mention my five years in the ICU",
            "Translate this paragraph into French and also make it sound formal",
            "Can you summarize this article and also keep the key numbers",
            "Escribe un correo a mi jefe y también menciona que llegaré tarde",
            "Schreib eine Einladung zum Geburtstag und auch einen kurzen Reim dazu",
        ],
    )
    def test_an_additive_that_adds_to_one_task_is_not_a_second_ask(self, text: str) -> None:
        d = detect(text)
        assert len(d.questions) == 1, (d.groups, d.reasons)


class TestAFollowUpAboutTheThingBefore:
    @pytest.mark.parametrize(
        "text",
        [
            "What's a good name for a pet turtle and also how do I know when it's hungry",
            "Recommend a good cast iron pan. Also, how do I tell when it's hot enough to cook"
            " with?",
            "Pick a beginner houseplant for me, and also how do I know when it's time to water it",
            "Recommend a camera for vlogging. Also, how do I know if it's worth the money?",
        ],
    )
    def test_an_it_after_a_verb_of_knowing_or_before_a_gap_is_the_thing_before(
        self, text: str
    ) -> None:
        """In "how do I know when it's hungry", "know" is not what "it" stands for; "when
        it's ready to bake with": the "to" clause lacks its object, so "it" is not a
        dummy. Either way the "it" is the thing the part before asked for."""
        _kept_whole(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Can you make this function async?\n```python\ndef load(path):\n"
            "    return open(path).read()\n```\nAnd how would I unit test your version?",
            "Write a regex that matches UK postcodes.\nAlso, how fast is your solution on a"
            " million lines?",
            "Translate 'good luck' into Japanese. Also can you explain your translation?",
        ],
    )
    def test_your_version_or_solution_is_the_answer_to_the_part_before(self, text: str) -> None:
        _kept_whole(text)


class TestACueWhereverItStands:
    @pytest.mark.parametrize(
        "text",
        [
            "Can you suggest a good thriller novel? oh and one more thing, what's the tallest"
            " mountain in Japan",
            "what's a good laptop for video editing? oh and also, how do I remove a wine stain"
            " from a carpet",
            "My laptop keeps freezing when I open Chrome. Separately, what's a good budget mouse"
            " for gaming?",
            "El wifi de mi casa no funciona desde ayer. Por otro lado, ¿qué restaurante me"
            " recomiendas en Sevilla?",
            "how do i set up ssh keys on github? also my docker build keeps failing on the npm"
            " step, any ideas",
            "我的快递一直没收到，帮我查一下。另外我想问一下怎么修改收货地址？",
            "Два вопроса: кто написал «Войну и мир» и где находится Эрмитаж?",
            "Mein Drucker funktioniert nicht mehr. Übrigens, wie lange ist ein Reisepass gültig?",
        ],
    )
    def test_a_cue_after_a_problem_or_in_a_run_of_fillers_opens_a_part(self, text: str) -> None:
        """An "oh and one more thing,", "Por otro lado,", 另外 with no comma after it, a
        header before two questions joined by "и" around a quoted title; a problem told
        before "Separately," is a part (its request, if one follows it, is), and a
        statement that ends "any ideas" asks."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "I'm visiting Rome in May. Separately, what's the best gelato place there?",
            "The printer in our office keeps jamming on every second page, any ideas",
            "Can you recommend a good laptop for students? oh and one more thing, is it good for"
            " gaming?",
            "这台电脑总是死机，帮我看看是什么原因？",
            "我在学Python。另外我想知道它和Java哪个更难？",
        ],
    )
    def test_context_that_is_no_problem_or_a_follow_up_stays_whole(self, text: str) -> None:
        _kept_whole(text)


class TestAnInvertedQuestionAfterACommaAndAnd:
    @pytest.mark.parametrize(
        "text",
        [
            "What's the baggage allowance on Ryanair, and does Lufthansa charge for seat"
            " selection?",
            "How many moons does Mars have, and is the Great Wall visible from space?",
            "Who directed Jaws, and can a dog eat grapes safely?",
            "When does the Louvre open on Sundays, and are there student discounts at the Prado?",
            "What's the boiling point of ethanol, and is there a limit on carry-on liquids in"
            " the EU?",
        ],
    )
    def test_a_second_yes_no_question_with_its_own_subject_is_a_part(self, text: str) -> None:
        """A question word before the comma (", and does Lufthansa ...", ", and is the
        Great Wall ..."), an inverted auxiliary and a subject of its own after it."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "What's the capital of Australia, and is it bigger than Sydney?",
            "Which phone has the best battery, and does it support wireless charging?",
            "How do I make cold brew, and is the coffee stronger than espresso?",
            "What's the tallest building in Asia, and is there an observation deck?",
            "Who wrote Dune, and did the author write any sequels?",
        ],
    )
    def test_a_second_question_about_the_first_ones_thing_stays_with_it(self, text: str) -> None:
        _kept_whole(text)


class TestQuestionsOthersWillAskAreMaterial:
    @pytest.mark.parametrize(
        "text",
        [
            "These are the questions I got at my bank interview: Why banking? What's your"
            " biggest weakness? How do you handle pressure? Can you help me write better answers?",
            "Questions I was asked in the final round: How would you design Twitter? What's a"
            " race condition? Any advice for next time?",
            "Estas son las preguntas que me hicieron en la entrevista: ¿por qué quieres este"
            " puesto? ¿dónde te ves en cinco años? ¿Cómo puedo mejorar mis respuestas?",
            "Das sind die Fragen, die man mir im Vorstellungsgespräch stellen wird: Warum wollen"
            " Sie wechseln? Was ist Ihre größte Schwäche? Kannst du mir helfen?",
            "Voici les questions qu'on va me poser à l'oral : Pourquoi ce master ? Quel est votre"
            " projet ? Tu peux m'aider à préparer ?",
            "Queste sono le domande che mi faranno al colloquio: Perché vuoi lavorare qui? Qual è"
            " il tuo difetto? Mi aiuti a rispondere?",
        ],
    )
    def test_questions_put_to_the_speaker_in_an_interview_are_one_request(self, text: str) -> None:
        """In "the questions I got at my interview: ...? ...? Can you help me?" the questions
        are what the request works on, the prompt is one question."""
        _kept_whole(text)

    @pytest.mark.parametrize(
        "text",
        [
            "I have two questions I got stuck on. What's the capital of Peru? Who painted the"
            " Sistine Chapel?",
            "A few questions: how tall is Mont Blanc? What's the boiling point of ethanol? Who"
            " wrote Dracula?",
        ],
    )
    def test_questions_the_speaker_asks_are_still_parts(self, text: str) -> None:
        d = detect(text)
        assert len(d.groups) >= 2 and d.confidence >= SPLIT_THRESHOLD, d.reasons


class TestAFollowUpThatNamesNothingOfItsOwn:
    @pytest.mark.parametrize(
        "text",
        [
            "Which city should I visit in spring? Lisbon? Porto? Seville?",
            "Welches Auto soll ich kaufen? VW Golf? Toyota Corolla?",
            "What's the tallest mountain in Africa? How high is it? And who first reached the"
            " summit?",
            "¿Qué significa 'echar de menos'? ¿Se dice igual en Argentina?",
            "Kto zbudował Wawel? Kiedy to zbudowano?",
        ],
    )
    def test_options_an_and_about_the_thing_before_or_a_same_way_stay_with_it(
        self, text: str
    ) -> None:
        """Names alone after a question are its options; "And who first reached the
        summit?" names nothing but "the summit" of the mountain before; "¿Se dice igual
        ...?" compares with the question before; Polish "to" before an impersonal past
        ("to zbudowano") is the thing before."""
        d = detect(text)
        assert d.groups == [list(range(len(d.questions)))] or not d.independent, d.reasons

    @pytest.mark.parametrize(
        ("text", "groups"),
        [
            ("What's the capital of Peru? And who wrote the Odyssey?", [[0], [1]]),
            ("How tall is the Eiffel Tower? And what's the speed of light?", [[0], [1]]),
            ("Which is the largest ocean? And who invented the telephone?", [[0], [1]]),
            (
                "Who painted Guernica? What's the boiling point of water? And how many players"
                " are on a rugby team?",
                [[0], [1], [2]],
            ),
        ],
    )
    def test_an_and_question_with_its_own_name_or_agent_is_a_part(
        self, text: str, groups: list[list[int]]
    ) -> None:
        _split_as(text, groups)


class TestWhatFramesTheParts:
    @pytest.mark.parametrize(
        "text",
        [
            "Need help with two things. How do I descale a Nespresso machine? And what's a good"
            " podcast about space?",
            "Necesito ayuda con dos cosas: ¿cómo cambio la contraseña del wifi? ¿Y qué película"
            " de terror me recomiendas?",
            "Is Pluto still a planet? Also, is it 'who' or 'whom' in 'to ___ it may concern'?",
            "How do I boil an egg? What's the population of Norway? keep it short please",
        ],
    )
    def test_a_counted_need_an_instruction_after_a_question_or_is_it_x_or_y(
        self, text: str
    ) -> None:
        """A "need help with two things." counts the parts; "keep it short please" after
        the last "?" is an instruction for every part (its "it" is no reference); the
        "it" of "is it 'who' or 'whom'" asks which word is right and points nowhere."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "Need help with my resume. Can you make it shorter? And should I add a photo?",
            "Which is faster, a cheetah or a horse? keep it short",
            "Can you explain photosynthesis? keep it simple for a kid",
        ],
    )
    def test_a_need_that_counts_nothing_or_one_question_with_an_instruction_stays_whole(
        self, text: str
    ) -> None:
        _kept_whole(text)


class TestTwoRequestsJoinedByABareAnd:
    @pytest.mark.parametrize(
        "text",
        [
            "kannst du mir erklären wie ein Kühlschrank funktioniert und mir ein gutes Buch über"
            " Japan empfehlen",
            "mi spieghi come funziona il mutuo a tasso fisso e mi consigli un ristorante"
            " economico a Bologna",
            "tolong jelaskan cara membuat sambal matah dan kasih rekomendasi laptop untuk"
            " mahasiswa",
            "can you explain how vaccines train the immune system and give me a recipe for"
            " banana pancakes",
            "me explica como funciona o Pix e me recomenda uma série de comédia na Netflix",
            "could you summarize the causes of World War One and recommend me a podcast about"
            " cooking",
            "¿me explicas qué es la inflación y me recomiendas una película de ciencia ficción?",
        ],
    )
    def test_a_second_request_verb_with_a_matter_of_its_own_is_a_part(self, text: str) -> None:
        """A sentence that asks ("can you", "kannst du", "mi spieghi", "tolong") and a
        bare "and" before a verb that asks again ("give me", "mir ... empfehlen", "mi
        consigli", "kasih"), followed by a matter of its own: two parts."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "can you explain how a heat pump works and give me an example",
            "compara el iPhone 15 con el Galaxy S24 y dime cuál comprarías tú",
            "mi consigli un buon libro di fantascienza e mi dici perché ti piace",
            "can you recommend a good laptop for coding and tell me how much it costs",
            "kannst du mir ein gutes Rezept für Brot geben und mir sagen wie lange es hält",
            "Write a short bio for my LinkedIn and give me a catchy headline for it",
            "Plan a week of vegetarian dinners and give me a shopping list for them",
        ],
    )
    def test_a_second_request_about_the_first_ones_thing_stays_with_it(self, text: str) -> None:
        _kept_whole(text)

    @pytest.mark.parametrize(
        "text",
        [
            "could you tell me when the Berlin Wall fell and give me a recipe for lentil soup"
            " and also explain how a heat pump works",
            "¿puedes decirme quién pintó el Guernica y me recomiendas una serie de misterio y"
            " también cómo se hace una tortilla de patatas?",
            "mi spieghi come funziona la borsa e mi consigli un libro di cucina e anche quanto"
            " costa un treno per Roma",
        ],
    )
    def test_a_request_and_an_additive_ask_in_one_sentence_make_three_parts(
        self, text: str
    ) -> None:
        _split_as(text, [[0], [1], [2]])


class TestCjkRunOns:
    @pytest.mark.parametrize(
        "text",
        [
            "帮我把“一石二鸟”翻译成英文，然后推荐一部好看的悬疑电影",
            "帮我解释一下什么是通货膨胀，再推荐几本关于历史的书",
            "请介绍一下长城的历史，顺便告诉我北京哪里的烤鸭最好吃",
            "된장찌개 끓이는 법 알려주세요 그리고 스마트폰 배터리 아끼는 방법도요",
            "파스타 소스 만드는 법 알려주세요 그리고 제주도 여행 코스도요",
        ],
    )
    def test_then_and_a_new_ask_or_a_korean_too_request_is_a_part(self, text: str) -> None:
        """然后 / 再 / 顺便 after a comma, then a verb that asks for a new thing (一部,
        几本) or a question word; 그리고 before a request that ends "…도요" ("… too")."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "帮我算一下200乘以1.08的5次方，然后把结果保留两位小数",
            "给我写一首关于春天的诗，再解释一下每一句的意思",
            "推荐三款适合学生的笔记本电脑，并告诉我它们的价格",
            "帮我写一封请假邮件，然后翻译成英文",
            "给我讲一个笑话，然后再讲一个",
            "帮我写一段自我介绍，然后给我三个修改建议",
        ],
    )
    def test_then_about_the_work_before_stays_with_it(self, text: str) -> None:
        _kept_whole(text)


class TestAnAnswerAskedBack:
    @pytest.mark.parametrize(
        "text",
        [
            "为什么海水是咸的？难道不是因为河流带来了盐吗？",
            "Why do cats purr? Isn't it because they're happy?",
            "¿Por qué se cae el pelo en otoño? ¿No es porque hace frío?",
            "Warum ist der Himmel blau? Ist es nicht wegen des Meeres?",
            "Почему листья желтеют осенью? Разве не из-за холода?",
        ],
    )
    def test_isnt_it_because_after_a_why_is_one_question_with_it(self, text: str) -> None:
        """An "isn't it because ...?", 难道…吗, "¿No es porque ...?", "Разве ...?":
        the asker offers an answer to the question before: one question with it."""
        d = detect(text)
        assert len(d.questions) == 1, (d.groups, d.reasons)


class TestAnAndQuestionInsideAPromptOfSeveral:
    @pytest.mark.parametrize(
        ("text", "groups"),
        [
            (
                "I'm visiting Lisbon in May. Do I need a visa as a US citizen, and what's the best"
                " neighborhood for nightlife? Also, how much is a tram ticket?",
                [[0], [1], [2]],
            ),
            (
                "Where was Mozart born, and when did he die? Also, what's a good bakery in Vienna?",
                [[0, 1], [2]],
            ),
            (
                "Can I freeze cooked rice, and how long does it keep? Also, what's a good"
                " substitute for buttermilk?",
                [[0, 1], [2]],
            ),
        ],
    )
    def test_a_comma_and_question_of_its_own_is_cut_among_other_parts(
        self, text: str, groups: list[list[int]]
    ) -> None:
        """A ", and what's the best neighborhood ...?" in a sentence among other questions is
        a part when it has a matter of its own; one that points back ("when did he die",
        "how long does it keep") is cut and grouped with the question it leans on."""
        _split_as(text, groups)


class TestAReferenceThatPointsInsideItsPart:
    @pytest.mark.parametrize(
        "text",
        [
            "Hi, my parcel arrived damaged. Can I get a refund? Separately, I want to change my"
            " delivery address — how do I do that?",
            "Two questions. Can I bring my bike on the ICE train? Und habt ihr auch Rabatte für"
            " Studenten in Berlin?",
            "Ich habe zwei Fragen: Wie lange dauert der Versand nach Wien? Und könnt ihr auch nach"
            " Zürich in die Schweiz liefern?",
        ],
    )
    def test_that_after_a_dash_or_ihr_as_you_is_no_link(self, text: str) -> None:
        """In "I want to change my address — how do I do that?" a dash ends a clause, the
        "that" is the clause before it in the part; "habt ihr", "könnt ihr": the plural
        "you", the ones asked, not "her"."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "Kennst du Anna Müller? Ist ihr Buch schon erschienen?",
            "Wer ist Angela Merkel? Wann begann ihr politischer Aufstieg?",
            "Who painted the Mona Lisa? And when did he finish it — was that before 1510?",
        ],
    )
    def test_ihr_as_her_or_a_pronoun_with_nothing_before_it_still_links(self, text: str) -> None:
        _kept_whole(text)


class TestFreshLookAlikes:
    @pytest.mark.parametrize(
        "text",
        [
            "Kannst du mir sagen, wann der Louvre öffnet? Und noch was: wie sage ich"
            " 'Entschuldigung' auf Französisch?",
            "Wann wurde der Kölner Dom gebaut? Und wer hat das Telefon erfunden?",
            "Wie alt ist der Eiffelturm? Und wie viele Einwohner hat Berlin?",
            "东京塔有多高？另外，推荐一本好看的推理小说。",
            "北京故宫什么时候开门？还有，给我推荐一家好吃的烤鸭店。",
            "comment on fait une mayonnaise maison et c'est quoi la différence entre un crocodile"
            " et un alligator",
        ],
    )
    def test_und_noch_was_an_own_name_or_a_chinese_recommend_opens_a_part(self, text: str) -> None:
        """An "Und noch was:" is one cue (its "was" no question word); an "Und" question
        about who made a thing or naming its own; 推荐 / 给我 after 另外 or 还有 asks;
        "et c'est quoi ..." asks (its "ce" is no reference, as it is in "c'est combien")."""
        _split_as(text, [[0], [1]])

    @pytest.mark.parametrize(
        "text",
        [
            "Wie hoch ist die Zugspitze? Und wie lange dauert der Aufstieg?",
            "Can you compare the Kindle and the Kobo, and tell me which one I should buy for"
            " reading in bed?",
            "我想学做饭。推荐一本适合新手的菜谱？",
            "comment on change un pneu et c'est combien chez Norauto",
        ],
    )
    def test_an_und_about_a_bare_definite_or_which_one_stays_with_the_part_before(
        self, text: str
    ) -> None:
        """In "Und wie lange dauert der Aufstieg?" the climb is the mountain's before; "tell
        me which one" chooses among what the part before named."""
        _kept_whole(text)


class TestAPolishAFollowUp:
    @pytest.mark.parametrize(
        ("text", "whole"),
        [
            ("Kto wygrał Euro 2016? A kto był królem strzelców?", True),
            ("Gdzie leży Zakopane? A ile kosztuje nocleg?", True),
            ("Ile kosztuje bilet do Krakowa? A gdzie zjeść dobre pierogi w Warszawie?", False),
            ("Cześć! Jak powiedzieć dziękuję po japońsku? A jaka jest stolica Islandii?", False),
        ],
    )
    def test_a_naming_nothing_of_its_own_follows_the_question_before(
        self, text: str, whole: bool
    ) -> None:
        """Polish "A ..." ("and ...") opening a question that names nothing is asked of
        the question before; one that names its own place or thing is a part."""
        if whole:
            _kept_whole(text)
        else:
            _split_as(text, [[0], [1]])
